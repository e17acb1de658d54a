// The x/time/rate oracle of ratekeeper's differential test: drives Go's real
// golang.org/x/time/rate Limiter (Debian's golang-golang-x-time-dev) through
// scenarios read on stdin, on a fake clock, and prints what it did.
//
// Input, one command a line (doubles as the hex of their IEEE-754 bits, so
// nothing is lost in decimal; times in whole microseconds):
//
//	case NAME
//	new RATE_BITS BURST
//	sleep MICROS | allow N | reserve N | cancel INDEX | wait N TIMEOUT_MICROS
//	wait_forever N | set_rate RATE_BITS | set_burst BURST | tokens
//	end
//
// Output, one line per command: "ok" (case, new, sleep, cancel, set_*),
// "true"/"false" (allow), "ok DELAY_NANOS" or "no" (reserve, wait,
// wait_forever), the bits of TokensAt (tokens), "end". A wait sleeps: the
// clock moves by the delay, rounded up to whole microseconds, as ratekeeper's
// manual clock does. A rate of +Infinity is rate.Inf.
package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// deadline is a context that carries a deadline (or none) and is never done:
// the oracle's clock is fake, so a real context would expire at once.
type deadline struct {
	at  time.Time
	has bool
}

func (d deadline) Deadline() (time.Time, bool) { return d.at, d.has }
func (deadline) Done() <-chan struct{}         { return nil }
func (deadline) Err() error                    { return nil }
func (deadline) Value(interface{}) interface{} { return nil }

var _ context.Context = deadline{}

func bits(hex string) float64 {
	u, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		panic(err)
	}
	return math.Float64frombits(u)
}

func limit(hex string) rate.Limit {
	r := bits(hex)
	if math.IsInf(r, 1) {
		return rate.Inf
	}
	return rate.Limit(r)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()

	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	var lim *rate.Limiter
	var micros int64
	var reservations []*rate.Reservation
	now := func() time.Time { return base.Add(time.Duration(micros) * time.Microsecond) }

	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "case":
			lim, micros, reservations = nil, 0, nil
			fmt.Fprintln(out, "ok")
		case "new":
			lim = rate.NewLimiter(limit(f[1]), atoi(f[2]))
			fmt.Fprintln(out, "ok")
		case "sleep":
			micros += int64(atoi(f[1]))
			fmt.Fprintln(out, "ok")
		case "allow":
			fmt.Fprintln(out, lim.AllowN(now(), atoi(f[1])))
		case "reserve":
			r := lim.ReserveN(now(), atoi(f[1]))
			reservations = append(reservations, r)
			if r.OK() {
				fmt.Fprintf(out, "ok %d\n", r.DelayFrom(now()))
			} else {
				fmt.Fprintln(out, "no")
			}
		case "cancel":
			reservations[atoi(f[1])].RatekeeperCancelAt(now())
			fmt.Fprintln(out, "ok")
		case "wait", "wait_forever":
			ctx := deadline{}
			if f[0] == "wait" {
				ctx = deadline{at: now().Add(time.Duration(atoi(f[2])) * time.Microsecond), has: true}
			}
			slept, err := lim.RatekeeperWait(ctx, atoi(f[1]), now())
			if err != nil {
				fmt.Fprintln(out, "no")
			} else {
				micros += (int64(slept) + 999) / 1000
				fmt.Fprintf(out, "ok %d\n", slept)
			}
		case "set_rate":
			lim.SetLimitAt(now(), limit(f[1]))
			fmt.Fprintln(out, "ok")
		case "set_burst":
			lim.SetBurstAt(now(), atoi(f[1]))
			fmt.Fprintln(out, "ok")
		case "tokens":
			fmt.Fprintf(out, "%x\n", math.Float64bits(lim.TokensAt(now())))
		case "end":
			fmt.Fprintln(out, "end")
		default:
			panic("unknown command " + f[0])
		}
	}
	if err := in.Err(); err != nil {
		panic(err)
	}
}
