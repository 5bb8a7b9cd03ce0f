//! Reading a plugin's answer out of its memory under the output limit.
//!
//! The canonical ABI lets a plugin return many strings that all point at one buffer: with 8 MiB
//! of memory it can return a million content blocks whose texts are the same 8 MiB. Lifting that
//! into Rust values the usual way copies every one (terabytes) before anyone can count them. So
//! answers are lifted into types of our own ([`Text`], [`Many`], [`Bytes`] and records of them)
//! whose lifting charges a [`LiftBudget`] *before* it copies: a string's length, a blob's bytes,
//! [`ITEM_BYTES`] per list item and per record, as [`output`](super::output) counts them. The
//! first charge past the plugin's output limit stops the lift with
//! [`LimitExceeded::Output`], so the host never copies (nor validates) more than the limit plus
//! one string for a call.
//!
//! The budget reaches the lifting code through a thread-local set around each poll of the call
//! ([`Budgeted`]): wasmtime lifts results inside the poll in which the plugin returns, on the
//! polling thread, whichever thread that is.
//!
//! These impls use wasmtime's doc-hidden lifting interface (the one its derive macros use);
//! wasmtime is pinned to one exact version, and the tests of the views fail loudly if it moves.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use wasmtime::ValRaw;
use wasmtime::component::__internal::wasmtime_environ::component::{
    CanonicalAbiInfo, InterfaceType,
};
use wasmtime::component::__internal::{InstanceType, LiftContext};
use wasmtime::component::{ComponentType, Lift};

use super::bindings::{completion, host, prompts, resources, tools, types};
use super::limits::LimitExceeded;
use super::output::ITEM_BYTES;

/// What one call may bring into the host.
pub struct LiftBudget {
    used: AtomicU64,
    limit: u64,
}

impl LiftBudget {
    pub fn new(limit: u64) -> Arc<LiftBudget> {
        Arc::new(LiftBudget {
            used: AtomicU64::new(0),
            limit,
        })
    }

    fn charge(&self, bytes: u64) -> wasmtime::Result<()> {
        let used = self
            .used
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if used > self.limit {
            return Err(wasmtime::Error::new(LimitExceeded::Output {
                bytes: used,
                limit_bytes: self.limit,
            }));
        }
        Ok(())
    }
}

thread_local! {
    /// The budget of the call being polled on this thread.
    static CURRENT: RefCell<Option<Arc<LiftBudget>>> = const { RefCell::new(None) };
}

/// Charges `bytes` to the budget of the call being polled (none outside [`Budgeted`]).
pub(crate) fn charge(bytes: u64) -> wasmtime::Result<()> {
    CURRENT.with(|current| match &*current.borrow() {
        Some(budget) => budget.charge(bytes),
        None => Ok(()),
    })
}

/// A future run with a lift budget in force during each of its polls.
pub struct Budgeted<F> {
    inner: Pin<Box<F>>,
    budget: Arc<LiftBudget>,
}

impl<F> Budgeted<F> {
    pub fn new(inner: F, budget: Arc<LiftBudget>) -> Self {
        Budgeted {
            inner: Box::pin(inner),
            budget,
        }
    }
}

impl<F: Future> Future for Budgeted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let budget = self.budget.clone();
        with_budget(budget, || self.inner.as_mut().poll(cx))
    }
}

/// Runs `f` with `budget` in force for what it lifts on this thread.
pub fn with_budget<R>(budget: Arc<LiftBudget>, f: impl FnOnce() -> R) -> R {
    /// Puts the previous budget back when dropped: also when `f` panics, so a caught panic
    /// never leaves this call's budget in force on the thread.
    struct Restore(Option<Arc<LiftBudget>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(budget))));
    f()
}

/// The element count (or string length, in code units) of a lowered pointer/length pair.
fn len_from_flat(src: &[ValRaw; 2]) -> u64 {
    // A latin1+utf16 string tags its length's top bit.
    u64::from(src[1].get_u32() & 0x7fff_ffff)
}

fn len_from_memory(bytes: &[u8]) -> u64 {
    let len = bytes
        .get(4..8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes);
    u64::from(len & 0x7fff_ffff)
}

/// Implements `ComponentType` and `Lift` for a wrapper of `$inner` that charges `$cost(len)`
/// before lifting.
macro_rules! charged_wrapper {
    ($(#[$doc:meta])* $name:ident $(<$t:ident>)? ($inner:ty), $cost:expr) => {
        $(#[$doc])*
        pub struct $name $(<$t>)? (pub $inner);

        // SAFETY: the wrapper lowers and lifts exactly as `$inner` does (same `Lower`, ABI and
        // type check); it only charges the budget before delegating.
        #[allow(unsafe_code)]
        unsafe impl $(<$t: ComponentType>)? ComponentType for $name $(<$t>)? {
            type Lower = <$inner as ComponentType>::Lower;
            const ABI: CanonicalAbiInfo = <$inner as ComponentType>::ABI;
            fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> wasmtime::Result<()> {
                <$inner as ComponentType>::typecheck(ty, types)
            }
        }

        // SAFETY: as above.
        #[allow(unsafe_code)]
        unsafe impl $(<$t: Lift>)? Lift for $name $(<$t>)? {
            fn linear_lift_from_flat(
                cx: &mut LiftContext<'_>,
                ty: InterfaceType,
                src: &Self::Lower,
            ) -> wasmtime::Result<Self> {
                charge($cost(len_from_flat(src)))?;
                Ok($name(<$inner as Lift>::linear_lift_from_flat(cx, ty, src)?))
            }

            fn linear_lift_from_memory(
                cx: &mut LiftContext<'_>,
                ty: InterfaceType,
                bytes: &[u8],
            ) -> wasmtime::Result<Self> {
                charge($cost(len_from_memory(bytes)))?;
                Ok($name(<$inner as Lift>::linear_lift_from_memory(cx, ty, bytes)?))
            }
        }
    };
}

charged_wrapper!(
    /// A `string`, charged its length.
    Text(String), |len| len
);
charged_wrapper!(
    /// A `list<u8>`, charged its length.
    Bytes(Vec<u8>), |len| len
);
charged_wrapper!(
    /// A `list<T>`, charged [`ITEM_BYTES`] per item before any item is lifted.
    Many<T>(Vec<T>), |len: u64| len.saturating_mul(ITEM_BYTES)
);

/// Moving a lifted view into the bindings' type of the same shape.
pub trait IntoOwned {
    type Owned;
    fn into_owned(self) -> Self::Owned;
}

impl IntoOwned for Text {
    type Owned = String;
    fn into_owned(self) -> String {
        self.0
    }
}

impl IntoOwned for Bytes {
    type Owned = Vec<u8>;
    fn into_owned(self) -> Vec<u8> {
        self.0
    }
}

impl<T: IntoOwned> IntoOwned for Many<T> {
    type Owned = Vec<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.0.into_iter().map(IntoOwned::into_owned).collect()
    }
}

impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(IntoOwned::into_owned)
    }
}

impl<T: IntoOwned, E: IntoOwned> IntoOwned for Result<T, E> {
    type Owned = Result<T::Owned, E::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(IntoOwned::into_owned)
            .map_err(IntoOwned::into_owned)
    }
}

/// Values without strings or lists are taken as they are.
macro_rules! owned_as_is {
    ($($ty:ty),*) => {$(
        impl IntoOwned for $ty {
            type Owned = $ty;
            fn into_owned(self) -> $ty {
                self
            }
        }
    )*};
}
owned_as_is!(
    bool,
    u32,
    u64,
    f64,
    types::Role,
    types::IconTheme,
    types::ErrorCode
);

/// Defines the view of a WIT record (fields in WIT order, with their WIT names) and its move
/// into the bindings' type. Its strings and lists are charged as they are lifted.
macro_rules! record_view {
    ($view:ident => $owned:path { $($field:ident : $ty:ty = $wit:literal),* $(,)? }) => {
        #[derive(ComponentType, Lift)]
        #[component(record)]
        pub struct $view {
            $(#[component(name = $wit)] $field: $ty,)*
        }

        impl IntoOwned for $view {
            type Owned = $owned;
            fn into_owned(self) -> $owned {
                $owned { $($field: self.$field.into_owned(),)* }
            }
        }
    };
}

/// Defines the view of a WIT variant whose cases all carry a payload.
macro_rules! variant_view {
    ($view:ident => $owned:path { $($case:ident ( $ty:ty ) = $wit:literal),* $(,)? }) => {
        #[derive(ComponentType, Lift)]
        #[component(variant)]
        pub enum $view {
            $(#[component(name = $wit)] $case($ty),)*
        }

        impl IntoOwned for $view {
            type Owned = $owned;
            fn into_owned(self) -> $owned {
                use $owned as Owned;
                match self {
                    $($view::$case(v) => Owned::$case(v.into_owned()),)*
                }
            }
        }
    };
}

record_view!(AnnotationsView => types::Annotations {
    audience: Many<types::Role> = "audience",
    priority: Option<f64> = "priority",
    last_modified: Option<Text> = "last-modified",
});
record_view!(IconView => types::Icon {
    src: Text = "src",
    mime_type: Option<Text> = "mime-type",
    sizes: Many<Text> = "sizes",
    theme: Option<types::IconTheme> = "theme",
});
variant_view!(ResourceBodyView => types::ResourceBody {
    Text(Text) = "text",
    Blob(Bytes) = "blob",
});
record_view!(ResourceContentsView => types::ResourceContents {
    uri: Text = "uri",
    mime_type: Option<Text> = "mime-type",
    body: ResourceBodyView = "body",
    meta: Option<Text> = "meta",
});
record_view!(TextContentView => types::TextContent {
    text: Text = "text",
    annotations: Option<AnnotationsView> = "annotations",
    meta: Option<Text> = "meta",
});
record_view!(MediaContentView => types::MediaContent {
    data: Bytes = "data",
    mime_type: Text = "mime-type",
    annotations: Option<AnnotationsView> = "annotations",
    meta: Option<Text> = "meta",
});
record_view!(ResourceLinkView => types::ResourceLink {
    uri: Text = "uri",
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    mime_type: Option<Text> = "mime-type",
    size: Option<u64> = "size",
    annotations: Option<AnnotationsView> = "annotations",
    icons: Many<IconView> = "icons",
    meta: Option<Text> = "meta",
});
record_view!(EmbeddedResourceView => types::EmbeddedResource {
    resource: ResourceContentsView = "resource",
    annotations: Option<AnnotationsView> = "annotations",
    meta: Option<Text> = "meta",
});
variant_view!(ContentBlockView => types::ContentBlock {
    Text(TextContentView) = "text",
    Image(MediaContentView) = "image",
    Audio(MediaContentView) = "audio",
    ResourceLink(ResourceLinkView) = "resource-link",
    EmbeddedResource(EmbeddedResourceView) = "embedded-resource",
});
record_view!(PluginErrorView => types::PluginError {
    code: types::ErrorCode = "code",
    message: Text = "message",
    data: Option<Text> = "data",
});

record_view!(ToolAnnotationsView => tools::ToolAnnotations {
    title: Option<Text> = "title",
    read_only_hint: Option<bool> = "read-only-hint",
    destructive_hint: Option<bool> = "destructive-hint",
    idempotent_hint: Option<bool> = "idempotent-hint",
    open_world_hint: Option<bool> = "open-world-hint",
});
record_view!(ToolView => tools::Tool {
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    input_schema: Text = "input-schema",
    output_schema: Option<Text> = "output-schema",
    annotations: Option<ToolAnnotationsView> = "annotations",
    icons: Many<IconView> = "icons",
    meta: Option<Text> = "meta",
});
record_view!(CallResultView => tools::CallResult {
    content: Many<ContentBlockView> = "content",
    structured_content: Option<Text> = "structured-content",
    is_error: bool = "is-error",
    meta: Option<Text> = "meta",
});

record_view!(ResourceView => resources::Resource {
    uri: Text = "uri",
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    mime_type: Option<Text> = "mime-type",
    size: Option<u64> = "size",
    annotations: Option<AnnotationsView> = "annotations",
    icons: Many<IconView> = "icons",
    meta: Option<Text> = "meta",
    file: Option<Text> = "file",
});
record_view!(ResourceTemplateView => resources::ResourceTemplate {
    uri_template: Text = "uri-template",
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    mime_type: Option<Text> = "mime-type",
    annotations: Option<AnnotationsView> = "annotations",
    icons: Many<IconView> = "icons",
    meta: Option<Text> = "meta",
});

record_view!(PromptArgumentView => prompts::PromptArgument {
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    required: bool = "required",
});
record_view!(PromptView => prompts::Prompt {
    name: Text = "name",
    title: Option<Text> = "title",
    description: Option<Text> = "description",
    arguments: Many<PromptArgumentView> = "arguments",
    icons: Many<IconView> = "icons",
    meta: Option<Text> = "meta",
});
record_view!(PromptMessageView => prompts::PromptMessage {
    role: types::Role = "role",
    content: ContentBlockView = "content",
});
record_view!(PromptResultView => prompts::PromptResult {
    description: Option<Text> = "description",
    messages: Many<PromptMessageView> = "messages",
    meta: Option<Text> = "meta",
});

variant_view!(CompletionRefView => completion::CompletionRef {
    Prompt(Text) = "prompt",
    ResourceTemplate(Text) = "resource-template",
});
record_view!(CompletionResultView => completion::CompletionResult {
    values: Many<Text> = "values",
    total: Option<u32> = "total",
    has_more: bool = "has-more",
});

impl<A: IntoOwned, B: IntoOwned> IntoOwned for (A, B) {
    type Owned = (A::Owned, B::Owned);
    fn into_owned(self) -> Self::Owned {
        (self.0.into_owned(), self.1.into_owned())
    }
}

// What a plugin passes to the `host` imports that carry lists (`sample`, `ask`): lifted under
// the same budget as its answer, so that a request of many views of one buffer stops there too.
record_view!(SamplingMessageView => host::SamplingMessage {
    role: types::Role = "role",
    content: Many<ContentBlockView> = "content",
});
record_view!(SamplingRequestView => host::SamplingRequest {
    messages: Many<SamplingMessageView> = "messages",
    system_prompt: Option<Text> = "system-prompt",
    max_tokens: u32 = "max-tokens",
    temperature: Option<f64> = "temperature",
    stop_sequences: Many<Text> = "stop-sequences",
    model_preferences: Option<Text> = "model-preferences",
    extra: Option<Text> = "extra",
});
record_view!(FormElicitationView => host::FormElicitation {
    message: Text = "message",
    requested_schema: Text = "requested-schema",
});
record_view!(UrlElicitationView => host::UrlElicitation {
    message: Text = "message",
    url: Text = "url",
    elicitation_id: Text = "elicitation-id",
});
variant_view!(ElicitationRequestView => host::ElicitationRequest {
    Form(FormElicitationView) = "form",
    Url(UrlElicitationView) = "url",
});

#[derive(ComponentType, Lift)]
#[component(variant)]
pub enum InputRequestView {
    #[component(name = "elicit")]
    Elicit(ElicitationRequestView),
    #[component(name = "sample")]
    Sample(SamplingRequestView),
    #[component(name = "list-roots")]
    ListRoots,
}

impl IntoOwned for InputRequestView {
    type Owned = host::InputRequest;
    fn into_owned(self) -> host::InputRequest {
        match self {
            InputRequestView::Elicit(e) => host::InputRequest::Elicit(e.into_owned()),
            InputRequestView::Sample(s) => host::InputRequest::Sample(s.into_owned()),
            InputRequestView::ListRoots => host::InputRequest::ListRoots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::component::{Component, Linker};
    use wasmtime::{Engine, Store};

    /// A component whose `f` returns `count` strings that all point at the same `len` bytes.
    fn aliasing_component(engine: &Engine, count: u32, len: u32) -> Component {
        let wat = format!(
            r#"(component
              (core module $m
                (memory (export "memory") 1)
                (func (export "realloc") (param i32 i32 i32 i32) (result i32) unreachable)
                (func (export "f") (result i32)
                  (local $i i32)
                  (i32.store (i32.const 0) (i32.const 16))
                  (i32.store (i32.const 4) (i32.const {count}))
                  (block $done
                    (loop $next
                      (br_if $done (i32.ge_u (local.get $i) (i32.const {count})))
                      (i32.store (i32.add (i32.const 16) (i32.mul (local.get $i) (i32.const 8)))
                                 (i32.const 40000))
                      (i32.store (i32.add (i32.const 20) (i32.mul (local.get $i) (i32.const 8)))
                                 (i32.const {len}))
                      (local.set $i (i32.add (local.get $i) (i32.const 1)))
                      (br $next)))
                  (i32.const 0)))
              (core instance $i (instantiate $m))
              (func (export "f") (result (list string))
                (canon lift (core func $i "f") (memory (core memory $i "memory"))
                  (realloc (core func $i "realloc")))))"#
        );
        let bytes = wat::parse_str(&wat).unwrap();
        Component::new(engine, bytes).unwrap()
    }

    fn lift_strings(count: u32, len: u32, limit: u64) -> wasmtime::Result<Vec<String>> {
        let engine = Engine::default();
        let component = aliasing_component(&engine, count, len);
        let mut store = Store::new(&engine, ());
        let instance = Linker::new(&engine).instantiate(&mut store, &component)?;
        let f = instance.get_typed_func::<(), (Many<Text>,)>(&mut store, "f")?;
        let (strings,) = with_budget(LiftBudget::new(limit), || f.call(&mut store, ()))?;
        Ok(strings.into_owned())
    }

    fn output_limit_hit(result: wasmtime::Result<Vec<String>>) -> bool {
        let err = result.expect_err("the lift must stop at the limit");
        matches!(
            err.downcast_ref::<LimitExceeded>(),
            Some(LimitExceeded::Output { .. })
        )
    }

    #[test]
    fn many_views_of_one_buffer_stop_at_the_limit() {
        // 1000 views of the same 20,000 bytes: 20 MB if copied, from a 64 KiB memory.
        assert!(output_limit_hit(lift_strings(1000, 20_000, 1 << 20)));
        // Within the limit, the same answer lifts whole.
        let strings = lift_strings(1000, 20_000, 64 << 20).unwrap();
        assert_eq!(strings.len(), 1000);
        assert!(strings.iter().all(|s| s.len() == 20_000));
    }

    #[test]
    fn every_item_of_a_list_is_charged() {
        // A thousand empty strings weigh their framing.
        assert!(output_limit_hit(lift_strings(
            1000,
            0,
            1000 * ITEM_BYTES - 1
        )));
        assert_eq!(
            lift_strings(1000, 0, 1000 * ITEM_BYTES).unwrap().len(),
            1000
        );
    }
}
