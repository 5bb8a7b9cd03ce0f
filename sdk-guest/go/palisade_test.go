package palisade

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type Inner struct {
	Label string `json:"label"`
}

type Arguments struct {
	Name    string            `json:"name" description:"Who to greet."`
	Times   int               `json:"times,omitempty"`
	Ratio   float64           `json:"ratio"`
	Loud    *bool             `json:"loud"`
	Tags    []string          `json:"tags,omitempty"`
	Extra   map[string]int    `json:"extra,omitempty"`
	Mode    string            `json:"mode" enum:"a, b"`
	Inner   Inner             `json:"inner"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Bytes   []byte            `json:"bytes,omitempty"`
	Skipped string            `json:"-"`
	hidden  string            // unexported: not in the schema
	Nested  map[string]*Inner `json:"nested,omitempty"`
}

func TestSchemaFollowsTypesAndTags(t *testing.T) {
	schema, err := SchemaOf(reflect.TypeFor[Arguments]())
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(schema)
	var got map[string]any
	_ = json.Unmarshal(text, &got)
	properties := got["properties"].(map[string]any)
	want := map[string]string{
		"name": "string", "times": "integer", "ratio": "number", "loud": "boolean",
		"tags": "array", "extra": "object", "mode": "string", "inner": "object", "bytes": "string",
	}
	for name, kind := range want {
		property, ok := properties[name].(map[string]any)
		if !ok || property["type"] != kind {
			t.Errorf("%s: want type %s, got %v", name, kind, properties[name])
		}
	}
	for _, absent := range []string{"Skipped", "hidden", "-"} {
		if _, ok := properties[absent]; ok {
			t.Errorf("%s should not be in the schema", absent)
		}
	}
	if description := properties["name"].(map[string]any)["description"]; description != "Who to greet." {
		t.Errorf("description: %v", description)
	}
	if enum := properties["mode"].(map[string]any)["enum"]; !reflect.DeepEqual(enum, []any{"a", "b"}) {
		t.Errorf("enum: %v", enum)
	}
	if raw := properties["raw"].(map[string]any); len(raw) != 0 {
		t.Errorf("a RawMessage is any JSON: %v", raw)
	}
	required := got["required"].([]any)
	if !reflect.DeepEqual(required, []any{"name", "ratio", "mode", "inner"}) {
		t.Errorf("required: %v", required)
	}
	if items := properties["tags"].(map[string]any)["items"]; !reflect.DeepEqual(items, map[string]any{"type": "string"}) {
		t.Errorf("items: %v", items)
	}
}

type Loop struct {
	Next *Loop `json:"next"`
}

func TestSchemaRefusesWhatJSONCannotSay(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[map[int]string](),
		reflect.TypeFor[chan int](),
		reflect.TypeFor[Loop](),
		reflect.TypeFor[func()](),
	} {
		if _, err := SchemaOf(typ); err == nil {
			t.Errorf("%s: no error", typ)
		}
	}
}

type Greet struct {
	Name string `json:"name"`
}

type Counted struct {
	Words int `json:"words"`
}

func reset() {
	tools = map[string]*tool{}
	toolOrder = nil
	registerError = nil
	registeredResources = nil
	registeredTemplates = nil
	registeredPrompts = map[string]*prompt{}
	completers = map[CompletionRef]map[string]completer{}
}

func TestToolsAnswerWithTextStructuredContentAndErrors(t *testing.T) {
	reset()
	Tool("greet", "Say hello", func(in Greet) (string, error) { return "Hello, " + in.Name + "!", nil }, ReadOnly())
	Tool("count", "Count words", func(in Greet) (Counted, error) {
		return Counted{Words: len(strings.Fields(in.Name))}, nil
	}, Tasks(TaskOptional))
	Tool("fail", "Fail", func(Greet) (*Result, error) { return nil, errors.New("no luck") })
	Tool("refuse", "Refuse", func(Greet) (*Result, error) {
		return nil, &PluginError{Code: CodeInvalidParams, Message: "not like that"}
	})
	Tool("panic", "Panic", func(Greet) (string, error) { panic("boom") })
	Tool("words", "List words", func(in Greet) ([]string, error) { return strings.Fields(in.Name), nil })

	listed, err := Tools()
	if err != nil || len(listed) != 6 || listed[0].Name != "greet" || !listed[0].ReadOnly {
		t.Fatalf("listed %v, %v", listed, err)
	}
	if listed[1].OutputSchema != `{"properties":{"words":{"type":"integer"}},"required":["words"],"type":"object"}` {
		t.Errorf("output schema: %s", listed[1].OutputSchema)
	}
	if listed[1].TaskSupport != TaskOptional || listed[0].OutputSchema != "" {
		t.Errorf("listing: %+v", listed)
	}

	result, err := CallTool("greet", `{"name":"Ada"}`)
	if err != nil || result.IsError || result.Content[0].Text != "Hello, Ada!" {
		t.Errorf("greet: %+v, %v", result, err)
	}
	result, err = CallTool("count", `{"name":"one two three"}`)
	if err != nil || string(result.Structured) != `{"words":3}` || result.Content[0].Text != `{"words":3}` {
		t.Errorf("count: %+v, %v", result, err)
	}
	// Structured content is an object: a list is the result's text only, with no output schema.
	result, err = CallTool("words", `{"name":"a b"}`)
	if err != nil || result.Structured != nil || result.Content[0].Text != `["a","b"]` || listed[5].OutputSchema != "" {
		t.Errorf("words: %+v, %v, %q", result, err, listed[5].OutputSchema)
	}
	result, err = CallTool("fail", `{"name":""}`)
	if err != nil || !result.IsError || result.Content[0].Text != "no luck" {
		t.Errorf("fail: %+v, %v", result, err)
	}
	var pluginError *PluginError
	if _, err = CallTool("refuse", `{}`); !errors.As(err, &pluginError) || pluginError.Code != CodeInvalidParams {
		t.Errorf("refuse: %v", err)
	}
	if _, err = CallTool("panic", `{}`); !errors.As(err, &pluginError) || pluginError.Code != CodeInternal ||
		!strings.Contains(err.Error(), "boom") {
		t.Errorf("panic: %v", err)
	}
	if _, err = CallTool("greet", `{"name": 5}`); !errors.As(err, &pluginError) || pluginError.Code != CodeInvalidParams {
		t.Errorf("bad arguments: %v", err)
	}
	if _, err = CallTool("nope", `{}`); !errors.As(err, &pluginError) || pluginError.Code != CodeNotFound {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestRegistrationMistakesFailTheListing(t *testing.T) {
	for _, register := range []func(){
		func() { Tool("bad name", "", func(Greet) (string, error) { return "", nil }) },
		func() {
			Tool("twice", "", func(Greet) (string, error) { return "", nil })
			Tool("twice", "", func(Greet) (string, error) { return "", nil })
		},
		func() { Tool("scalar", "", func(string) (string, error) { return "", nil }) },
		func() { Tool("loop", "", func(Loop) (string, error) { return "", nil }) },
	} {
		reset()
		register()
		if _, err := Tools(); err == nil {
			t.Errorf("a mistake was listed without an error")
		}
	}
	reset()
}

func TestResourcesAndTemplatesAreReadByURI(t *testing.T) {
	reset()
	defer reset()
	Resource(ResourceInfo{URI: "notes://about", Name: "about", MimeType: "text/plain"}, func() ([]Contents, error) {
		return []Contents{{Text: "about"}}, nil
	})
	ResourceTemplate(TemplateInfo{URITemplate: "notes://{folder}/{+rest}", Name: "note"}, func(uri string, variables map[string]string) ([]Contents, error) {
		return []Contents{{Text: variables["folder"] + "|" + variables["rest"]}}, nil
	})
	contents, err := ReadResource("notes://about")
	if err != nil || contents[0].Text != "about" || contents[0].URI != "notes://about" || contents[0].MimeType != "text/plain" {
		t.Errorf("fixed: %+v, %v", contents, err)
	}
	contents, err = ReadResource("notes://my%20folder/a/b.md")
	if err != nil || contents[0].Text != "my folder|a/b.md" {
		t.Errorf("template: %+v, %v", contents, err)
	}
	var pluginError *PluginError
	for _, uri := range []string{"notes://nofolder", "other://x/y", "notes:///x"} {
		if _, err := ReadResource(uri); !errors.As(err, &pluginError) || pluginError.Code != CodeNotFound {
			t.Errorf("%s: %v", uri, err)
		}
	}
	for _, bad := range []string{"notes://{a}{b}", "notes://{", "notes://{a/b}"} {
		reset()
		ResourceTemplate(TemplateInfo{URITemplate: bad, Name: "x"}, nil)
		if _, err := Tools(); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestPromptsCheckRequiredArgumentsAndCompletionsAnswer(t *testing.T) {
	reset()
	defer reset()
	Prompt(PromptInfo{Name: "review", Arguments: []PromptArgument{{Name: "code", Required: true}}}, func(arguments map[string]string) (*PromptResult, error) {
		return &PromptResult{Messages: []Message{UserMessage("Review: " + arguments["code"])}}, nil
	})
	CompletePromptArgument("review", "code", func(value string, _ map[string]string) ([]string, error) {
		return []string{value + "1", value + "2"}, nil
	})
	result, err := GetPrompt("review", map[string]string{"code": "x := 1"})
	if err != nil || result.Messages[0].Content.Text != "Review: x := 1" || result.Messages[0].Role != RoleUser {
		t.Errorf("get: %+v, %v", result, err)
	}
	var pluginError *PluginError
	if _, err := GetPrompt("review", map[string]string{}); !errors.As(err, &pluginError) || pluginError.Code != CodeInvalidParams {
		t.Errorf("missing argument: %v", err)
	}
	if refs := Completable(); len(refs) != 1 || refs[0].Prompt != "review" {
		t.Errorf("completable: %v", refs)
	}
	values, err := Complete(CompletionRef{Prompt: "review"}, "code", "v", nil)
	if err != nil || !reflect.DeepEqual(values, []string{"v1", "v2"}) {
		t.Errorf("complete: %v, %v", values, err)
	}
	if values, err := Complete(CompletionRef{Prompt: "other"}, "code", "v", nil); err != nil || values != nil {
		t.Errorf("nothing to complete: %v, %v", values, err)
	}
}
