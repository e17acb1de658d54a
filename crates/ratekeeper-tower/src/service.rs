//! [`RateLimit`]: the service the layer wraps around the inner one, and its
//! [`ResponseFuture`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_service::Service;

use crate::key::KeyExtractor;
use crate::layer::{insert_fields, Fields, NoKey, RequestCost, Settings};
use crate::limiter::{BoxError, Checking, KeyedCheck, Verdict};

/// The rate-limiting service: made by [`RateLimitLayer`](crate::RateLimitLayer).
pub struct RateLimit<S, L, E, C> {
    inner: S,
    /// One reference for all the rest: axum clones the service for every
    /// request, and each reference counted is a pair of atomic operations.
    shared: Arc<Shared<L, E, C>>,
}

struct Shared<L, E, C> {
    limiter: Arc<L>,
    settings: Arc<Settings>,
    key: E,
    cost: C,
}

impl<S, L, E, C> RateLimit<S, L, E, C> {
    pub(crate) fn new(inner: S, limiter: Arc<L>, settings: Arc<Settings>, key: E, cost: C) -> Self {
        RateLimit { inner, shared: Arc::new(Shared { limiter, settings, key, cost }) }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: Clone, L, E, C> Clone for RateLimit<S, L, E, C> {
    fn clone(&self) -> Self {
        RateLimit { inner: self.inner.clone(), shared: Arc::clone(&self.shared) }
    }
}

impl<S: fmt::Debug, L, E: fmt::Debug, C: fmt::Debug> fmt::Debug for RateLimit<S, L, E, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("inner", &self.inner)
            .field("key", &self.shared.key)
            .field("cost", &self.shared.cost)
            .finish_non_exhaustive()
    }
}

impl<S, L, E, C, ReqBody, ResBody> Service<Request<ReqBody>> for RateLimit<S, L, E, C>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: From<Bytes>,
    L: KeyedCheck,
    E: KeyExtractor<ReqBody>,
    C: RequestCost<ReqBody>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S, ReqBody, L>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let shared = &*self.shared;
        let settings = &*shared.settings;
        if settings.exempt(&request) {
            return ResponseFuture::calling(self.inner.call(request), None);
        }
        // Known when compiled: an in-process limiter's key in its cheaper form.
        let key = if L::LOCAL_KEYS { shared.key.extract_local(&request) } else { shared.key.extract(&request) };
        let key: &[u8] = match (&key, &settings.no_key) {
            (Some(key), _) => key.as_ref(),
            (None, NoKey::Shared(shared)) => shared,
            (None, NoKey::Admit) => return ResponseFuture::calling(self.inner.call(request), None),
        };
        let cost = shared.cost.cost(&request);
        if settings.admitted_bare() && shared.limiter.admit(key, cost) {
            // Admitted, and nothing to add to the response.
            return ResponseFuture::calling(self.inner.call(request), None);
        }
        match shared.limiter.check(key, cost) {
            Checking::Ready(result) => {
                ResponseFuture { state: decided(result, &mut self.inner, request, &*shared.limiter, settings) }
            }
            Checking::Pending(check) => {
                // The request goes to the inner service once the check
                // answers: the one that was driven ready goes with it, and
                // a clone takes its place here (tower's usual hand-over).
                let fresh = self.inner.clone();
                let ready = std::mem::replace(&mut self.inner, fresh);
                ResponseFuture {
                    state: State::Waiting {
                        check,
                        // Boxed: the check is a round trip anyway, and an
                        // in-process limiter's futures stay small.
                        pending: Some(Box::new(Pending {
                            service: ready,
                            request,
                            limiter: Arc::clone(&shared.limiter),
                            settings: Arc::clone(&shared.settings),
                        })),
                    },
                }
            }
        }
    }
}

/// What a request waiting for its check holds until the answer.
struct Pending<S, Req, L> {
    service: S,
    request: Req,
    limiter: Arc<L>,
    settings: Arc<Settings>,
}

pin_project! {
    /// The future of a [`RateLimit`] service's response.
    pub struct ResponseFuture<S, ReqBody, L>
    where
        S: Service<Request<ReqBody>>,
        L: KeyedCheck,
    {
        #[pin]
        state: State<S, Request<ReqBody>, L, L::Future, S::Future>,
    }
}

pin_project! {
    #[project = StateProjection]
    enum State<S, Req, L, CheckFuture, CallFuture> {
        // The limiter is deciding (a Redis round trip).
        Waiting { #[pin] check: CheckFuture, pending: Option<Box<Pending<S, Req, L>>> },
        // The inner service is answering; `fields` go on its response.
        //
        // Boxed, and `None` when there are none: this variant sets the
        // future's size, and the layers above move a future whole each
        // time they wrap it before it is first polled (axum: into
        // `MapErr`'s and `MapIntoResponse`'s futures, then into the box
        // of its `BoxCloneSyncService`). Held inline, draft-8's two values
        // were copied that many times on every request, fields or not,
        // which cost more than the box's allocation costs a request that
        // has fields (benches/http/tower/run, in process).
        Calling { #[pin] future: CallFuture, fields: Option<Box<Fields>> },
        // The layer's own response (a refusal, a limiter's error).
        Own { response: Option<Response<Bytes>> },
    }
}

impl<S, ReqBody, L> ResponseFuture<S, ReqBody, L>
where
    S: Service<Request<ReqBody>>,
    L: KeyedCheck,
{
    fn calling(future: S::Future, fields: Option<Box<Fields>>) -> Self {
        ResponseFuture { state: State::Calling { future, fields } }
    }
}

impl<S, ReqBody, L> fmt::Debug for ResponseFuture<S, ReqBody, L>
where
    S: Service<Request<ReqBody>>,
    L: KeyedCheck,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Waiting { .. } => "waiting for the limiter",
            State::Calling { .. } => "calling the inner service",
            State::Own { .. } => "answering",
        };
        f.debug_struct("ResponseFuture").field("state", &state).finish()
    }
}

/// What follows a check's `result`: the inner service called (with the
/// fields to add to its response), or the layer's own response.
fn decided<S, Req, L, CheckFuture>(
    result: Result<Verdict, BoxError>,
    service: &mut S,
    request: Req,
    limiter: &L,
    settings: &Settings,
) -> State<S, Req, L, CheckFuture, S::Future>
where
    S: Service<Req>,
    L: KeyedCheck,
{
    let answer = result.and_then(|verdict| {
        if verdict.allowed() {
            settings.fields(limiter, &verdict).map(Ok)
        } else {
            settings.refused(limiter, &verdict).map(Err)
        }
    });
    match answer {
        Ok(Ok(fields)) => {
            let fields = match fields {
                Fields::None => None,
                fields => Some(Box::new(fields)),
            };
            State::Calling { future: service.call(request), fields }
        }
        Ok(Err(refusal)) => State::Own { response: Some(refusal) },
        Err(error) => match (settings.limiter_error)(&error) {
            Some(response) => State::Own { response: Some(response) },
            None => State::Calling { future: service.call(request), fields: None },
        },
    }
}

impl<S, ReqBody, ResBody, L> Future for ResponseFuture<S, ReqBody, L>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: From<Bytes>,
    L: KeyedCheck,
{
    type Output = Result<Response<ResBody>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProjection::Waiting { check, pending } => {
                    let result = ready!(check.poll(cx));
                    let Pending { mut service, request, limiter, settings } =
                        *pending.take().expect("ResponseFuture polled after completion");
                    let next = decided(result, &mut service, request, &*limiter, &settings);
                    state.set(next);
                }
                StateProjection::Calling { future, fields } => {
                    if fields.is_none() {
                        // Nothing to add: the inner future's answer as it
                        // is, written once where the caller wants it rather
                        // than copied through this frame.
                        return future.poll(cx);
                    }
                    let mut response = ready!(future.poll(cx))?;
                    if let Some(fields) = fields.take() {
                        insert_fields(response.headers_mut(), *fields);
                    }
                    return Poll::Ready(Ok(response));
                }
                StateProjection::Own { response } => {
                    let response = response.take().expect("ResponseFuture polled after completion");
                    return Poll::Ready(Ok(response.map(ResBody::from)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientAddress, RateLimitLayer, ResponseBody};
    use http_body_util::{BodyExt, Empty};
    use ratekeeper::{AnyClock, AnyKeyedLimiter, KeyedOptions, LimiterSpec};
    use std::convert::Infallible;
    use std::net::{IpAddr, Ipv4Addr};
    use tower_layer::Layer;

    /// An inner service whose body (`Empty`) cannot be made from bytes,
    /// its responses mapped into `ResponseBody` first.
    #[derive(Clone)]
    struct EmptyBodies;

    impl Service<Request<()>> for EmptyBodies {
        type Response = Response<ResponseBody<Empty<Bytes>>>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Self::Response, Infallible>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _request: Request<()>) -> Self::Future {
            std::future::ready(Ok(Response::new(ResponseBody::inner(Empty::new()))))
        }
    }

    /// The layer answers with the inner body type: the inner service's own
    /// body when admitted, its refusal's bytes when not.
    #[test]
    fn a_body_that_cannot_be_made_from_bytes_goes_through_response_body() {
        let spec = LimiterSpec::FixedWindow { limit: 1, window_micros: 60_000_000 };
        let limiter = AnyKeyedLimiter::new(&spec, KeyedOptions::new(10), AnyClock::default()).unwrap();
        let mut service = RateLimitLayer::new(limiter).key(ClientAddress::default()).layer(EmptyBodies);
        let mut replies = Vec::new();
        for _ in 0..2 {
            let mut request = Request::new(());
            request.extensions_mut().insert(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)));
            let response = at_once(service.call(request)).unwrap();
            let status = response.status();
            replies.push((status, at_once(response.into_body().collect()).unwrap().to_bytes()));
        }
        assert_eq!(replies[0], (http::StatusCode::OK, Bytes::new()));
        assert_eq!(replies[1], (http::StatusCode::TOO_MANY_REQUESTS, Bytes::from_static(b"Too Many Requests\n")));
    }

    /// An inner service whose future is as large as a router's.
    #[derive(Clone)]
    struct LargeFutures;

    struct Large([u64; 40]);

    impl Future for Large {
        type Output = Result<Response<Bytes>, Infallible>;

        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
            Poll::Ready(Ok(Response::new(Bytes::from(self.0.len().to_string()))))
        }
    }

    impl Service<Request<()>> for LargeFutures {
        type Response = Response<Bytes>;
        type Error = Infallible;
        type Future = Large;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _request: Request<()>) -> Large {
            Large([0; 40])
        }
    }

    /// The response's future is the inner one's and two words at most:
    /// the layers above move it whole, several times a request, so each
    /// byte it holds beside the inner future is paid for on every request.
    #[test]
    fn the_future_is_the_inner_ones_and_two_words_at_most() {
        let size = std::mem::size_of::<ResponseFuture<LargeFutures, (), AnyKeyedLimiter>>();
        assert!(size <= std::mem::size_of::<Large>() + 16, "{size} bytes");
        // With or without fields, the inner service's response comes through.
        let spec = LimiterSpec::FixedWindow { limit: 2, window_micros: 60_000_000 };
        for style in [ratekeeper::http::HeaderStyle::Draft8, ratekeeper::http::HeaderStyle::None] {
            let limiter = AnyKeyedLimiter::new(&spec, KeyedOptions::new(10), AnyClock::default()).unwrap();
            let mut service = RateLimitLayer::new(limiter).header_style(style).layer(LargeFutures);
            let mut request = Request::new(());
            request.extensions_mut().insert(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)));
            let response = at_once(service.call(request)).unwrap();
            assert_eq!(response.body(), &Bytes::from_static(b"40"));
            assert_eq!(response.headers().contains_key("ratelimit"), style == ratekeeper::http::HeaderStyle::Draft8);
        }
    }

    struct NoWake;

    impl std::task::Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }

    /// Polls a future that never waits (these services answer at once).
    fn at_once<F: Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let waker = std::task::Waker::from(Arc::new(NoWake));
        match future.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(output) => output,
            Poll::Pending => panic!("the service waited"),
        }
    }
}
