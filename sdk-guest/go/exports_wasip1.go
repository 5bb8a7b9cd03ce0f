//go:build wasip1

package palisade

import (
	"fmt"
	"os"

	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_completion"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_prompts"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_resources"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_tools"
	// The component's exports: linked in by importing the package.
	_ "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/wit_exports"
	completion "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_completion"
	prompts "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_prompts"
	resources "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_resources"
	witTools "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_tools"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

func init() {
	export_palisade_plugin_tools.ListToolsHook = listTools
	export_palisade_plugin_tools.CallToolHook = callTool
	export_palisade_plugin_resources.ListResourcesHook = listResources
	export_palisade_plugin_resources.ListResourceTemplatesHook = listTemplates
	export_palisade_plugin_resources.ReadResourceHook = readResource
	export_palisade_plugin_prompts.ListPromptsHook = listPrompts
	export_palisade_plugin_prompts.GetPromptHook = getPrompt
	export_palisade_plugin_completion.CompletableHook = completable
	export_palisade_plugin_completion.CompleteHook = complete
}

func listTools() []witTools.Tool {
	listed, err := Tools()
	if err != nil {
		// Listing happens when the plugin loads: failing it there shows the author the reason.
		fmt.Fprintln(os.Stderr, err)
		panic(err)
	}
	out := make([]witTools.Tool, 0, len(listed))
	for _, info := range listed {
		out = append(out, witTools.Tool{
			Name:         info.Name,
			Title:        optional(info.Title),
			Description:  optional(info.Description),
			InputSchema:  info.InputSchema,
			OutputSchema: optional(info.OutputSchema),
			Annotations:  annotations(info),
			TaskSupport:  witTools.TaskSupport(info.TaskSupport),
			Meta:         witTypes.None[string](),
		})
	}
	return out
}

func annotations(info ToolInfo) witTypes.Option[witTools.ToolAnnotations] {
	hint := func(set bool) witTypes.Option[bool] {
		if set {
			return witTypes.Some(true)
		}
		return witTypes.None[bool]()
	}
	pointer := func(value *bool) witTypes.Option[bool] {
		if value == nil {
			return witTypes.None[bool]()
		}
		return witTypes.Some(*value)
	}
	if !info.ReadOnly && !info.Idempotent && info.Destructive == nil && info.OpenWorld == nil {
		return witTypes.None[witTools.ToolAnnotations]()
	}
	return witTypes.Some(witTools.ToolAnnotations{
		Title:           witTypes.None[string](),
		ReadOnlyHint:    hint(info.ReadOnly),
		DestructiveHint: pointer(info.Destructive),
		IdempotentHint:  hint(info.Idempotent),
		OpenWorldHint:   pointer(info.OpenWorld),
	})
}

func callTool(name string, arguments string) witTypes.Result[witTools.CallResult, types.PluginError] {
	// The bindings' strings point into memory they free after the call: keep copies only.
	result, err := CallTool(string([]byte(name)), string([]byte(arguments)))
	if err != nil {
		return witTypes.Err[witTools.CallResult](toWitError(asPluginError(err)))
	}
	content := make([]types.ContentBlock, 0, len(result.Content))
	for _, block := range result.Content {
		content = append(content, toWitContent(block))
	}
	structured := witTypes.None[string]()
	if result.Structured != nil {
		structured = witTypes.Some(string(result.Structured))
	}
	return witTypes.Ok[witTools.CallResult, types.PluginError](witTools.CallResult{
		Content:           content,
		StructuredContent: structured,
		IsError:           result.IsError,
		Meta:              witTypes.None[string](),
	})
}

func toWitContent(block Content) types.ContentBlock {
	switch block.Kind {
	case "image", "audio":
		media := types.MediaContent{
			Data:        block.Data,
			MimeType:    block.MimeType,
			Annotations: witTypes.None[types.Annotations](),
			Meta:        witTypes.None[string](),
		}
		if block.Kind == "image" {
			return types.MakeContentBlockImage(media)
		}
		return types.MakeContentBlockAudio(media)
	}
	return types.MakeContentBlockText(types.TextContent{
		Text:        block.Text,
		Annotations: witTypes.None[types.Annotations](),
		Meta:        witTypes.None[string](),
	})
}

func toWitError(err *PluginError) types.PluginError {
	return types.PluginError{Code: types.ErrorCode(err.Code), Message: err.Message, Data: witTypes.None[string]()}
}

func optional(text string) witTypes.Option[string] {
	if text == "" {
		return witTypes.None[string]()
	}
	return witTypes.Some(text)
}

func listResources() []resources.Resource {
	listed := Resources()
	out := make([]resources.Resource, 0, len(listed))
	for _, info := range listed {
		out = append(out, resources.Resource{
			Uri:         info.URI,
			Name:        info.Name,
			Title:       optional(info.Title),
			Description: optional(info.Description),
			MimeType:    optional(info.MimeType),
			Size:        witTypes.None[uint64](),
			Annotations: witTypes.None[types.Annotations](),
			Meta:        witTypes.None[string](),
			File:        optional(info.File),
		})
	}
	return out
}

func listTemplates() []resources.ResourceTemplate {
	listed := Templates()
	out := make([]resources.ResourceTemplate, 0, len(listed))
	for _, info := range listed {
		out = append(out, resources.ResourceTemplate{
			UriTemplate: info.URITemplate,
			Name:        info.Name,
			Title:       optional(info.Title),
			Description: optional(info.Description),
			MimeType:    optional(info.MimeType),
			Annotations: witTypes.None[types.Annotations](),
			Meta:        witTypes.None[string](),
		})
	}
	return out
}

func readResource(uri string) witTypes.Result[[]types.ResourceContents, types.PluginError] {
	contents, err := ReadResource(string([]byte(uri)))
	if err != nil {
		return witTypes.Err[[]types.ResourceContents](toWitError(asPluginError(err)))
	}
	out := make([]types.ResourceContents, 0, len(contents))
	for _, c := range contents {
		body := types.MakeResourceBodyText(c.Text)
		if c.Blob != nil {
			body = types.MakeResourceBodyBlob(c.Blob)
		}
		out = append(out, types.ResourceContents{Uri: c.URI, MimeType: optional(c.MimeType), Body: body, Meta: witTypes.None[string]()})
	}
	return witTypes.Ok[[]types.ResourceContents, types.PluginError](out)
}

func listPrompts() []prompts.Prompt {
	listed := Prompts()
	out := make([]prompts.Prompt, 0, len(listed))
	for _, info := range listed {
		arguments := make([]prompts.PromptArgument, 0, len(info.Arguments))
		for _, a := range info.Arguments {
			arguments = append(arguments, prompts.PromptArgument{Name: a.Name, Title: optional(a.Title), Description: optional(a.Description), Required: a.Required})
		}
		out = append(out, prompts.Prompt{
			Name:        info.Name,
			Title:       optional(info.Title),
			Description: optional(info.Description),
			Arguments:   arguments,
			Meta:        witTypes.None[string](),
		})
	}
	return out
}

func pairs(list []witTypes.Tuple2[string, string]) map[string]string {
	out := make(map[string]string, len(list))
	for _, pair := range list {
		out[string([]byte(pair.F0))] = string([]byte(pair.F1))
	}
	return out
}

func getPrompt(name string, arguments []witTypes.Tuple2[string, string]) witTypes.Result[prompts.PromptResult, types.PluginError] {
	result, err := GetPrompt(string([]byte(name)), pairs(arguments))
	if err != nil {
		return witTypes.Err[prompts.PromptResult](toWitError(asPluginError(err)))
	}
	messages := make([]prompts.PromptMessage, 0, len(result.Messages))
	for _, m := range result.Messages {
		messages = append(messages, prompts.PromptMessage{Role: toWitRole(m.Role), Content: toWitContent(m.Content)})
	}
	return witTypes.Ok[prompts.PromptResult, types.PluginError](prompts.PromptResult{
		Description: optional(result.Description),
		Messages:    messages,
		Meta:        witTypes.None[string](),
	})
}

func completable() []completion.CompletionRef {
	refs := Completable()
	out := make([]completion.CompletionRef, 0, len(refs))
	for _, ref := range refs {
		if ref.Prompt != "" {
			out = append(out, completion.MakeCompletionRefPrompt(ref.Prompt))
		} else {
			out = append(out, completion.MakeCompletionRefResourceTemplate(ref.Template))
		}
	}
	return out
}

func complete(target completion.CompletionRef, argument string, value string, context []witTypes.Tuple2[string, string]) witTypes.Result[completion.CompletionResult, types.PluginError] {
	var ref CompletionRef
	if target.Tag() == completion.CompletionRef_Prompt {
		ref.Prompt = string([]byte(target.Prompt()))
	} else {
		ref.Template = string([]byte(target.ResourceTemplate()))
	}
	values, err := Complete(ref, string([]byte(argument)), string([]byte(value)), pairs(context))
	if err != nil {
		return witTypes.Err[completion.CompletionResult](toWitError(asPluginError(err)))
	}
	return witTypes.Ok[completion.CompletionResult, types.PluginError](completion.CompletionResult{
		Values:  values,
		Total:   witTypes.None[uint32](),
		HasMore: false,
	})
}

func asPluginError(err error) *PluginError {
	if pluginError, ok := err.(*PluginError); ok {
		return pluginError
	}
	return &PluginError{Code: CodeInternal, Message: err.Error()}
}
