// Package export_palisade_plugin_resources is what the generated exports call for
// palisade:plugin/resources: the SDK's root package sets the functions in its init.
package export_palisade_plugin_resources

import (
	resources "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_resources"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Set by the SDK before any export is called.
var (
	ListResourcesHook         func() []resources.Resource
	ListResourceTemplatesHook func() []resources.ResourceTemplate
	ReadResourceHook          func(uri string) witTypes.Result[[]types.ResourceContents, types.PluginError]
)

// ListResources is the export list-resources.
func ListResources() []resources.Resource { return ListResourcesHook() }

// ListResourceTemplates is the export list-resource-templates.
func ListResourceTemplates() []resources.ResourceTemplate { return ListResourceTemplatesHook() }

// ReadResource is the export read-resource.
func ReadResource(uri string) witTypes.Result[[]types.ResourceContents, types.PluginError] {
	return ReadResourceHook(uri)
}
