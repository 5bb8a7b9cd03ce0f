//! Components that export `palisade:plugin` interfaces: their answers lift into the bindings'
//! own types, weighed against the output limit.

use wasmtime::Store;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, ComponentType, Instance, InstancePre,
    Lift, Lower,
};

use super::answers::Listing;
use crate::bindings::{completion, prompts, resources, tools, types};
use crate::call::CallContext;
use crate::error::CallError;
use crate::output::{OutputSize, within_limit};
use crate::run::Runner;
use crate::store::StoreState;

const TOOLS: &str = "palisade:plugin/tools@0.2.0";
const RESOURCES: &str = "palisade:plugin/resources@0.2.0";
const PROMPTS: &str = "palisade:plugin/prompts@0.2.0";
const COMPLETION: &str = "palisade:plugin/completion@0.2.0";

/// The version of `palisade:plugin` this host serves (its interfaces' own).
pub(crate) fn contract_version() -> &'static str {
    TOOLS.rsplit_once('@').map_or("", |(_, version)| version)
}

/// Which `palisade:plugin` interfaces a component exports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exports {
    /// `palisade:plugin/tools`.
    pub tools: bool,
    /// `palisade:plugin/resources`.
    pub resources: bool,
    /// `palisade:plugin/prompts`.
    pub prompts: bool,
    /// `palisade:plugin/completion`.
    pub completion: bool,
}

impl Exports {
    /// The interfaces the component linked as `pre` exports.
    pub(crate) fn of(pre: &InstancePre<StoreState>) -> Exports {
        Exports {
            tools: tools::GuestIndices::new(pre).is_ok(),
            resources: resources::GuestIndices::new(pre).is_ok(),
            prompts: prompts::GuestIndices::new(pre).is_ok(),
            completion: completion::GuestIndices::new(pre).is_ok(),
        }
    }

    /// Whether it exports none of them.
    pub fn none(&self) -> bool {
        *self == Exports::default()
    }
}

/// A component that exports at least one `palisade:plugin` interface.
#[derive(Debug, Clone, Copy)]
pub struct Contract {
    /// Which interfaces.
    pub exports: Exports,
    funcs: Funcs,
}

/// Where each function of the contract is in the component, for the interfaces it exports.
#[derive(Debug, Clone, Copy, Default)]
struct Funcs {
    list_tools: Option<ComponentExportIndex>,
    call_tool: Option<ComponentExportIndex>,
    list_resources: Option<ComponentExportIndex>,
    list_resource_templates: Option<ComponentExportIndex>,
    read_resource: Option<ComponentExportIndex>,
    list_prompts: Option<ComponentExportIndex>,
    get_prompt: Option<ComponentExportIndex>,
    completable: Option<ComponentExportIndex>,
    complete: Option<ComponentExportIndex>,
}

impl Funcs {
    fn of(component: &Component, exports: Exports) -> Funcs {
        let func = |exported: bool, interface: &str, name: &str| {
            if !exported {
                return None;
            }
            let interface = component.get_export_index(None, interface)?;
            component.get_export_index(Some(&interface), name)
        };
        Funcs {
            list_tools: func(exports.tools, TOOLS, "list-tools"),
            call_tool: func(exports.tools, TOOLS, "call-tool"),
            list_resources: func(exports.resources, RESOURCES, "list-resources"),
            list_resource_templates: func(exports.resources, RESOURCES, "list-resource-templates"),
            read_resource: func(exports.resources, RESOURCES, "read-resource"),
            list_prompts: func(exports.prompts, PROMPTS, "list-prompts"),
            get_prompt: func(exports.prompts, PROMPTS, "get-prompt"),
            completable: func(exports.completion, COMPLETION, "completable"),
            complete: func(exports.completion, COMPLETION, "complete"),
        }
    }
}

impl Contract {
    /// The contract of the component linked as `pre`, exporting `exports` (not none).
    pub(crate) fn new(pre: &InstancePre<StoreState>, exports: Exports) -> Contract {
        Contract {
            exports,
            funcs: Funcs::of(pre.component(), exports),
        }
    }

    /// Every list the plugin's exports offer, from one instance.
    pub(super) async fn list(&self, runner: &Runner) -> Result<Listing, CallError> {
        let funcs = self.funcs;
        runner
            .run(CallContext::default(), async move |store, instance| {
                let mut listing = Listing::default();
                if funcs.list_tools.is_some() {
                    listing.tools = call_export(store, instance, &funcs.list_tools, ()).await?;
                }
                if funcs.list_resources.is_some() {
                    listing.resources =
                        call_export(store, instance, &funcs.list_resources, ()).await?;
                    listing.templates =
                        call_export(store, instance, &funcs.list_resource_templates, ()).await?;
                }
                if funcs.list_prompts.is_some() {
                    listing.prompts = call_export(store, instance, &funcs.list_prompts, ()).await?;
                }
                if funcs.completable.is_some() {
                    listing.completable =
                        call_export(store, instance, &funcs.completable, ()).await?;
                }
                Ok(listing)
            })
            .await
    }

    /// Calls the tool `name` with `arguments` (JSON text).
    pub(super) async fn call_tool(
        &self,
        runner: &Runner,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        call_fallible(runner, call, self.funcs.call_tool, (name, arguments)).await
    }

    /// Lists the resources with fixed URIs, as they are now.
    pub(crate) async fn list_resources(
        &self,
        runner: &Runner,
        call: CallContext,
    ) -> Result<Vec<resources::Resource>, CallError> {
        let func = self.funcs.list_resources;
        runner
            .run(call, async move |store, instance| {
                call_export(store, instance, &func, ()).await
            })
            .await
    }

    /// Reads the resource at `uri`.
    pub(crate) async fn read_resource(
        &self,
        runner: &Runner,
        uri: String,
        call: CallContext,
    ) -> Result<Vec<types::ResourceContents>, CallError> {
        call_fallible(runner, call, self.funcs.read_resource, (uri,)).await
    }

    /// Fills in the prompt `name` (the plugin's own name).
    pub(crate) async fn get_prompt(
        &self,
        runner: &Runner,
        name: String,
        arguments: Vec<(String, String)>,
        call: CallContext,
    ) -> Result<prompts::PromptResult, CallError> {
        call_fallible(runner, call, self.funcs.get_prompt, (name, arguments)).await
    }

    /// Suggests values for an argument of a prompt or resource template.
    pub(crate) async fn complete(
        &self,
        runner: &Runner,
        target: completion::CompletionRef,
        argument: (String, String),
        context: Vec<(String, String)>,
        call: CallContext,
    ) -> Result<completion::CompletionResult, CallError> {
        let params = (target, argument.0, argument.1, context);
        call_fallible(runner, call, self.funcs.complete, params).await
    }
}

/// Calls the export `func` with `params` in `instance`: its answer, if within the output limit.
/// (What lifting it may copy is bounded by the store's hostcall fuel, `copy_bound.rs`.)
async fn call_export<P, V>(
    store: &mut Store<StoreState>,
    instance: &Instance,
    func: &Option<ComponentExportIndex>,
    params: P,
) -> wasmtime::Result<V>
where
    P: ComponentNamedList + Lower + Send + Sync + 'static,
    V: ComponentType + Lift + OutputSize + Send + Sync + 'static,
{
    let func = func
        .as_ref()
        .ok_or_else(|| wasmtime::format_err!("the plugin does not export this function"))?;
    let typed = instance.get_typed_func::<P, (V,)>(&mut *store, func)?;
    let (answer,) = typed.call_async(&mut *store, params).await?;
    Ok(within_limit(answer, store.data().output_limit)?)
}

/// Calls an export that answers `result<V, plugin-error>` in a fresh instance; the plugin's own
/// error becomes [`CallError::Plugin`], its secrets hidden.
async fn call_fallible<P, V>(
    runner: &Runner,
    call: CallContext,
    func: Option<ComponentExportIndex>,
    params: P,
) -> Result<V, CallError>
where
    P: ComponentNamedList + Lower + Send + Sync + 'static,
    V: ComponentType + Lift + OutputSize + Send + Sync + 'static,
{
    runner
        .run(call, async move |store, instance| {
            call_export::<P, Result<V, types::PluginError>>(store, instance, &func, params).await
        })
        .await?
        .map_err(|mut e| {
            runner.grants.redactor.redact_in_place(&mut e.message);
            CallError::Plugin(e)
        })
}
