package palisade

import (
	"fmt"
	"net/url"
	"strings"
)

// ResourceInfo is a resource as it is listed.
type ResourceInfo struct {
	// URI names it, such as notes://today.
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	// File is the path (as the plugin sees it) its contents come from, if any: the host
	// watches it and tells subscribed clients when it changes.
	File string
}

// TemplateInfo is a resource template as it is listed.
type TemplateInfo struct {
	// URITemplate is an RFC 6570 template of {name} (one path segment) and {+name} (the rest)
	// variables, such as notes://{name}.
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
}

// Contents is what reading a resource gives: text, or bytes in Blob.
type Contents struct {
	// URI defaults to the URI read.
	URI      string
	MimeType string
	Text     string
	Blob     []byte
}

type resource struct {
	info ResourceInfo
	read func() ([]Contents, error)
}

type template struct {
	info  TemplateInfo
	parts []templatePart
	read  func(uri string, variables map[string]string) ([]Contents, error)
}

var (
	registeredResources []*resource
	registeredTemplates []*template
)

// Resource registers a resource with a fixed URI. Call it from an init function.
func Resource(info ResourceInfo, read func() ([]Contents, error)) {
	if info.URI == "" || info.Name == "" {
		failRegistration(fmt.Errorf("palisade.Resource(%q): a resource needs a URI and a name", info.URI))
		return
	}
	registeredResources = append(registeredResources, &resource{info: info, read: read})
}

// ResourceTemplate registers resources whose URIs match a template; `read` gets the URI and
// its variables, percent-decoded.
func ResourceTemplate(info TemplateInfo, read func(uri string, variables map[string]string) ([]Contents, error)) {
	parts, err := parseTemplate(info.URITemplate)
	if err == nil && info.Name == "" {
		err = fmt.Errorf("a template needs a name")
	}
	if err != nil {
		failRegistration(fmt.Errorf("palisade.ResourceTemplate(%q): %w", info.URITemplate, err))
		return
	}
	registeredTemplates = append(registeredTemplates, &template{info: info, parts: parts, read: read})
}

func failRegistration(err error) {
	if registerError == nil {
		registerError = err
	}
}

// Resources lists the registered resources.
func Resources() []ResourceInfo {
	listed := make([]ResourceInfo, 0, len(registeredResources))
	for _, r := range registeredResources {
		listed = append(listed, r.info)
	}
	return listed
}

// Templates lists the registered resource templates.
func Templates() []TemplateInfo {
	listed := make([]TemplateInfo, 0, len(registeredTemplates))
	for _, t := range registeredTemplates {
		listed = append(listed, t.info)
	}
	return listed
}

// ReadResource reads `uri` as the host does: a fixed resource, else the first template that
// matches; for tests of a plugin.
func ReadResource(uri string) (contents []Contents, err error) {
	defer failOnPanic("reading "+uri, &err)
	for _, r := range registeredResources {
		if r.info.URI == uri {
			contents, err = r.read()
			return withURI(contents, uri, r.info.MimeType), err
		}
	}
	for _, t := range registeredTemplates {
		if variables, ok := matchTemplate(t.parts, uri); ok {
			contents, err = t.read(uri, variables)
			return withURI(contents, uri, t.info.MimeType), err
		}
	}
	return nil, &PluginError{Code: CodeNotFound, Message: fmt.Sprintf("no resource %s", uri)}
}

func withURI(contents []Contents, uri, mimeType string) []Contents {
	for i := range contents {
		if contents[i].URI == "" {
			contents[i].URI = uri
		}
		if contents[i].MimeType == "" {
			contents[i].MimeType = mimeType
		}
	}
	return contents
}

// A template is literal text and variables: {name} matches up to the next '/', {+name} the
// longest rest that lets the template match.
type templatePart struct {
	literal  string
	variable string
	reserved bool
}

func parseTemplate(text string) ([]templatePart, error) {
	var parts []templatePart
	for text != "" {
		open := strings.IndexByte(text, '{')
		if open < 0 {
			parts = append(parts, templatePart{literal: text})
			break
		}
		if open > 0 {
			parts = append(parts, templatePart{literal: text[:open]})
		}
		end := strings.IndexByte(text[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("a '{' without its '}'")
		}
		name := text[open+1 : open+end]
		reserved := strings.HasPrefix(name, "+")
		name = strings.TrimPrefix(name, "+")
		if name == "" || strings.ContainsAny(name, "{}/,*?#&") {
			return nil, fmt.Errorf("the variable {%s} is not a plain name", name)
		}
		if len(parts) > 0 && parts[len(parts)-1].variable != "" {
			return nil, fmt.Errorf("two variables in a row cannot be told apart")
		}
		parts = append(parts, templatePart{variable: name, reserved: reserved})
		text = text[open+end+1:]
	}
	return parts, nil
}

func matchTemplate(parts []templatePart, uri string) (map[string]string, bool) {
	if len(parts) == 0 {
		return nil, false
	}
	part := parts[0]
	if part.literal != "" {
		rest, ok := strings.CutPrefix(uri, part.literal)
		if !ok {
			return nil, false
		}
		if len(parts) == 1 {
			return map[string]string{}, rest == ""
		}
		return matchTemplate(parts[1:], rest)
	}
	// A variable: try every end, longest first for {+name}, up to a '/' for {name}.
	limit := len(uri)
	if !part.reserved {
		if slash := strings.IndexByte(uri, '/'); slash >= 0 {
			limit = slash
		}
	}
	for end := limit; end >= 1; end-- {
		variables := map[string]string{}
		if len(parts) > 1 {
			more, ok := matchTemplate(parts[1:], uri[end:])
			if !ok {
				continue
			}
			variables = more
		} else if end != len(uri) {
			continue
		}
		value, err := url.PathUnescape(uri[:end])
		if err != nil {
			return nil, false
		}
		variables[part.variable] = value
		return variables, true
	}
	return nil, false
}
