//! [`ResponseBody`]: the inner service's body, or the layer's own (a
//! refusal's), as one type — for an inner service whose body type cannot
//! be made from bytes.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// The body of a response through the layer: the inner service's, or
    /// the bytes of a response the layer wrote itself (a 429, a 503).
    ///
    /// The layer answers with the inner service's own body type, made from
    /// bytes (`From<Bytes>`: axum's `Body`, hyper's `Full<Bytes>`) for its
    /// own responses, so that a framework never has to wrap it again. An
    /// inner service whose body cannot be made from bytes (hyper's
    /// `Incoming` in a proxy, a boxed body) maps its responses into this
    /// type first: `inner.map_response(|r| r.map(ResponseBody::inner))`
    /// with tower's `ServiceExt`, or any equivalent.
    #[derive(Debug)]
    pub struct ResponseBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProjection]
    #[derive(Debug)]
    enum Kind<B> {
        Inner { #[pin] body: B },
        // Taken once sent.
        Own { bytes: Option<Bytes> },
    }
}

impl<B> ResponseBody<B> {
    /// The inner service's body.
    pub fn inner(body: B) -> Self {
        ResponseBody { kind: Kind::Inner { body } }
    }
}

/// The body of a response the layer wrote itself.
impl<B> From<Bytes> for ResponseBody<B> {
    fn from(bytes: Bytes) -> Self {
        ResponseBody { kind: Kind::Own { bytes: (!bytes.is_empty()).then_some(bytes) } }
    }
}

impl<B: Body<Data = Bytes>> Body for ResponseBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProjection::Inner { body } => body.poll_frame(cx),
            KindProjection::Own { bytes } => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Own { bytes } => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Own { bytes } => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
        }
    }
}
