package httpclient

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestTheGrantNamedInErrorsIsTheOneTheHostTakes(t *testing.T) {
	for _, c := range []struct{ scheme, host, grant string }{
		{"https", "API.example.com", "api.example.com"},
		{"https", "api.example.com:443", "api.example.com"},
		{"https", "api.example.com:8443", "api.example.com:8443"},
		{"http", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http", "example.com:80", "http://example.com"},
		{"https", "[::1]:9000", "[::1]:9000"},
		{"https", "[::1]", "[::1]"},
	} {
		if got := grantFor(c.scheme, c.host); got != c.grant {
			t.Errorf("%s://%s: got %q, want %q", c.scheme, c.host, got, c.grant)
		}
	}
}

func TestABodyPastItsLimitIsAnErrorNotCutShort(t *testing.T) {
	read := func(body string, limit int64) (string, error) {
		capped := &cappedBody{body: io.NopCloser(strings.NewReader(body)), left: limit, limit: limit, url: "GET x"}
		out, err := io.ReadAll(capped)
		return string(out), err
	}
	if out, err := read("four", 4); err != nil || out != "four" {
		t.Errorf("at the limit: %q, %v", out, err)
	}
	_, err := read("five!", 4)
	var tooLarge *Error
	if !errors.As(err, &tooLarge) || tooLarge.Kind != TooLarge || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("past the limit: %v", err)
	}
}

func TestRedirectsStopAtTheLimit(t *testing.T) {
	client := New(MaxRedirects(2))
	via := make([]*http.Request, 3)
	via[0], _ = http.NewRequest("GET", "https://api.example.com/a", nil)
	if err := client.CheckRedirect(nil, via); err == nil || !strings.Contains(err.Error(), "more than 2 redirects") {
		t.Errorf("three hops: %v", err)
	}
	first, _ := http.NewRequest("GET", "https://api.example.com/a", nil)
	first.Header.Set("Authorization", "Bearer t")
	for _, c := range []struct {
		url  string
		kept bool
	}{
		{"https://api.example.com/b", true},
		{"https://API.example.com/b", true},
		{"https://api.example.com:8443/b", false},
		{"http://api.example.com/b", false},
		{"https://other.example.com/b", false},
	} {
		next, _ := http.NewRequest("GET", c.url, nil)
		next.Header = first.Header.Clone()
		next.Header.Set("Cookie", "c=1")
		if err := client.CheckRedirect(next, []*http.Request{first}); err != nil {
			t.Errorf("one hop: %v", err)
		}
		if kept := next.Header.Get("Authorization") != "" && next.Header.Get("Cookie") != ""; kept != c.kept {
			t.Errorf("%s: credentials kept %v, want %v", c.url, kept, c.kept)
		}
	}
	if err := New(MaxRedirects(0)).CheckRedirect(nil, nil); !errors.Is(err, http.ErrUseLastResponse) {
		t.Errorf("no redirects: %v", err)
	}
}
