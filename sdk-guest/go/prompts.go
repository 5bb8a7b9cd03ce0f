package palisade

import (
	"fmt"
	"sort"
)

// PromptInfo is a prompt as it is listed.
type PromptInfo struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is an argument a prompt takes.
type PromptArgument struct {
	Name        string
	Title       string
	Description string
	// Required: the host refuses a prompts/get without it.
	Required bool
}

// Role says who speaks a message: "user" or "assistant".
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of a prompt (or of a sampling request).
type Message struct {
	Role    Role
	Content Content
}

// UserMessage is a text message from the user.
func UserMessage(text string) Message { return Message{Role: RoleUser, Content: Text(text)} }

// AssistantMessage is a text message from the assistant.
func AssistantMessage(text string) Message {
	return Message{Role: RoleAssistant, Content: Text(text)}
}

// PromptResult is what a prompt gives.
type PromptResult struct {
	Description string
	Messages    []Message
}

type prompt struct {
	info PromptInfo
	get  func(arguments map[string]string) (*PromptResult, error)
}

var registeredPrompts = map[string]*prompt{}

// Prompt registers a prompt. Call it from an init function.
func Prompt(info PromptInfo, get func(arguments map[string]string) (*PromptResult, error)) {
	if !toolName.MatchString(info.Name) {
		failRegistration(fmt.Errorf("palisade.Prompt(%q): a prompt's name is 1 to 64 characters of A-Z a-z 0-9 _ -", info.Name))
		return
	}
	if _, taken := registeredPrompts[info.Name]; taken {
		failRegistration(fmt.Errorf("palisade.Prompt(%q): registered twice", info.Name))
		return
	}
	registeredPrompts[info.Name] = &prompt{info: info, get: get}
}

// Prompts lists the registered prompts, by name.
func Prompts() []PromptInfo {
	names := make([]string, 0, len(registeredPrompts))
	for name := range registeredPrompts {
		names = append(names, name)
	}
	sort.Strings(names)
	listed := make([]PromptInfo, 0, len(names))
	for _, name := range names {
		listed = append(listed, registeredPrompts[name].info)
	}
	return listed
}

// GetPrompt runs the prompt `name` as the host does; for tests of a plugin.
func GetPrompt(name string, arguments map[string]string) (result *PromptResult, err error) {
	found, ok := registeredPrompts[name]
	if !ok {
		return nil, &PluginError{Code: CodeNotFound, Message: fmt.Sprintf("no prompt %q", name)}
	}
	defer failOnPanic("the prompt", &err)
	for _, argument := range found.info.Arguments {
		if _, given := arguments[argument.Name]; argument.Required && !given {
			return nil, &PluginError{Code: CodeInvalidParams, Message: fmt.Sprintf("the argument %q is required", argument.Name)}
		}
	}
	return found.get(arguments)
}

// CompletionRef names what a completion is for: a prompt's argument or a template's variable.
type CompletionRef struct {
	// Prompt is the prompt's name, or empty.
	Prompt string
	// Template is the resource template's URI template, or empty.
	Template string
}

type completer func(value string, context map[string]string) ([]string, error)

var completers = map[CompletionRef]map[string]completer{}

// CompletePromptArgument registers how to complete a prompt's argument: `complete` gets what
// the user typed so far and the other arguments already given, and returns suggestions.
func CompletePromptArgument(prompt, argument string, complete func(value string, context map[string]string) ([]string, error)) {
	addCompleter(CompletionRef{Prompt: prompt}, argument, complete)
}

// CompleteTemplateVariable registers how to complete a resource template's variable.
func CompleteTemplateVariable(uriTemplate, variable string, complete func(value string, context map[string]string) ([]string, error)) {
	addCompleter(CompletionRef{Template: uriTemplate}, variable, complete)
}

func addCompleter(ref CompletionRef, name string, complete completer) {
	if completers[ref] == nil {
		completers[ref] = map[string]completer{}
	}
	completers[ref][name] = complete
}

// Completable lists what has completions.
func Completable() []CompletionRef {
	refs := make([]CompletionRef, 0, len(completers))
	for ref := range completers {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool {
		return refs[i].Prompt+"\x00"+refs[i].Template < refs[j].Prompt+"\x00"+refs[j].Template
	})
	return refs
}

// Complete suggests values as the host asks; for tests of a plugin.
func Complete(ref CompletionRef, argument, value string, context map[string]string) (values []string, err error) {
	complete, ok := completers[ref][argument]
	if !ok {
		return nil, nil
	}
	defer failOnPanic("completion", &err)
	return complete(value, context)
}
