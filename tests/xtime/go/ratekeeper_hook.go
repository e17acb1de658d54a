// ratekeeper's hook into golang.org/x/time/rate, compiled into that package
// (through `go build -overlay`) only for the differential test; it is not
// part of x/time/rate.
//
// x/time/rate's own tests drive WaitN through the unexported `wait`, which
// takes the current time and a timer factory. This hook does the same, so
// the oracle runs x/time/rate's real WaitN decision (burst check, deadline
// check through reserveN's maxFutureReserve) at a time of its choosing, and
// learns the delay WaitN would have slept.

package rate

import (
	"context"
	"time"
)

// RatekeeperWait runs WaitN's logic at time t: ctx carries the deadline (or
// none). It returns the delay WaitN slept (0 when it did not sleep) and its
// error.
func (lim *Limiter) RatekeeperWait(ctx context.Context, n int, t time.Time) (time.Duration, error) {
	var slept time.Duration
	timer := func(d time.Duration) (<-chan time.Time, func() bool, func()) {
		slept = d
		ch := make(chan time.Time, 1)
		ch <- t.Add(d) // fires at once: the oracle's clock, not a real one
		return ch, func() bool { return true }, func() {}
	}
	err := lim.wait(ctx, n, t, timer)
	return slept, err
}

// RatekeeperCancelAt is CancelAt(t) with ratekeeper's documented difference:
// a cancel never gives back more tokens than the reservation holds. CancelAt
// counts the tokens reserved after r as the time from r's timeToAct to the
// limiter's lastEvent; once a cancel has let later reservations act before
// r, that time is negative and CancelAt gave back more than r held. Here
// such a time counts as 0: lastEvent is set to r's timeToAct for the call
// (so CancelAt keeps none back) and put back after it (ratekeeper leaves
// its latest event as it was, since it is not r's).
func (r *Reservation) RatekeeperCancelAt(t time.Time) {
	if !r.ok {
		r.CancelAt(t)
		return
	}
	lim := r.lim
	lim.mu.Lock()
	latest := lim.lastEvent
	early := latest.Before(r.timeToAct)
	if early {
		lim.lastEvent = r.timeToAct
	}
	lim.mu.Unlock()
	r.CancelAt(t)
	if early {
		lim.mu.Lock()
		lim.lastEvent = latest
		lim.mu.Unlock()
	}
}
