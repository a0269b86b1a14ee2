package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/handlers/apitest"
)

// hostile is one value a hostile client sends in place of a valid one.
type hostile struct {
	name string
	// text is the value as the characters of a query, a path segment, a header or a form field.
	text string
	// json is the value as written into a JSON body.
	json any
}

var (
	hostileTexts = []hostile{
		{name: "NUL", text: "a\x00b", json: "a\x00b"},
		{name: "invalid UTF-8", text: "a\xff\xfeb", json: rawText("a\xff\xfeb")},
		{name: "100,000 characters", text: strings.Repeat("a", 100_000), json: strings.Repeat("a", 100_000)},
	}
	hostileInts = []hostile{
		{name: "2^31", text: "2147483648", json: int64(1) << 31},
		{name: "-2^63", text: "-9223372036854775808", json: int64(-1) << 63},
	}
)

// probeOp is one operation of the contract as the probe calls it.
type probeOp struct {
	id, method, prefix, path string
	params                   []probeParam
	contentType              string
	body                     any
}

type probeParam struct {
	name, in string
	schema   map[string]any
	required bool
}

// probeOps reads every operation of the contract with its parameters and the body it prefers (JSON first).
func probeOps(t *testing.T) (schemaDoc, []probeOp) {
	t.Helper()
	raw, err := os.ReadFile("../../openapi/openapi.yaml")
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &root))
	d := schemaDoc{root: root}
	var ops []probeOp
	paths := root["paths"].(map[string]any)
	for _, p := range sortedNames(paths) {
		item := paths[p].(map[string]any)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			po := probeOp{id: op["operationId"].(string), method: strings.ToUpper(method), prefix: "/v1", path: p}
			if _, ok := op["servers"]; ok {
				po.prefix = ""
			} else if _, ok := item["servers"]; ok {
				po.prefix = ""
			}
			params, _ := item["parameters"].([]any)
			opParams, _ := op["parameters"].([]any)
			for _, pr := range append(append([]any{}, params...), opParams...) {
				pm := d.deref(pr)
				req, _ := pm["required"].(bool)
				po.params = append(po.params, probeParam{name: pm["name"].(string), in: pm["in"].(string),
					schema: d.merged(pm["schema"]), required: req})
			}
			if rb := d.deref(op["requestBody"]); rb != nil {
				content := rb["content"].(map[string]any)
				for _, ct := range []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"} {
					if c, ok := content[ct]; ok {
						po.contentType, po.body = ct, c.(map[string]any)["schema"]
						break
					}
				}
			}
			ops = append(ops, po)
		}
	}
	return d, ops
}

// probe is one hostile request: an operation with one field replaced.
type probe struct {
	op    *probeOp
	field string
	// label is how a refusal names the field: a parameter's name or a body path such as steps[0].subject.
	label string
	// wide marks a 64-bit integer field (see leaf).
	wide  bool
	value hostile
	build func(url string) (*http.Request, error)
}

// probes lists, for op, one request per (text or integer field, hostile value): path, query and header
// parameters and the fields of its body.
func probes(d schemaDoc, op *probeOp) []probe {
	var out []probe
	valuesFor := func(kind string) []hostile {
		switch kind {
		case "string":
			return hostileTexts
		case "integer":
			return hostileInts
		}
		return nil
	}
	base := d.sample(op.body, "", 0)
	for _, p := range op.params {
		for _, h := range valuesFor(schemaType(p.schema)) {
			if p.in == "header" && strings.ContainsRune(h.text, 0) {
				continue // net/http refuses to send a NUL in a header
			}
			if p.in == "cookie" {
				continue
			}
			label := p.name
			if p.in == "path" {
				label = "URL path segment"
			}
			out = append(out, probe{op: op, field: p.in + " " + p.name, label: label, value: h, build: requestFor(d, op, base, p.name, h.text)})
		}
	}
	if op.body == nil {
		return out
	}
	if op.contentType != "application/json" {
		s := d.merged(op.body)
		props, _ := s["properties"].(map[string]any)
		for _, name := range sortedNames(props) {
			for _, h := range valuesFor(schemaType(d.merged(props[name]))) {
				f := map[string]any{name: h.text}
				out = append(out, probe{op: op, field: "form " + name, label: name, value: h, build: requestFor(d, op, f, "", "")})
			}
		}
		return out
	}
	var leaves []leaf
	d.leaves(op.body, nil, nil, map[string]bool{}, &leaves)
	for _, l := range leaves {
		for _, h := range valuesFor(l.kind) {
			out = append(out, probe{op: op, field: "body " + bodyPath(l.path), label: bodyPath(l.path), wide: l.wide, value: h,
				build: requestFor(d, op, withValue(base, l, h.json), "", "")})
		}
	}
	return out
}

// bodyPath writes a body path the way refusals name it: steps[0].subject.
func bodyPath(path []any) string {
	var b strings.Builder
	for _, step := range path {
		if key, ok := step.(string); ok {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(key)
			continue
		}
		fmt.Fprintf(&b, "[%d]", step)
	}
	return b.String()
}

// requestFor builds op's request with body (for a form: the fields to override) and, when param is set,
// that parameter sent as text instead of its sample.
func requestFor(d schemaDoc, op *probeOp, body any, param, text string) func(string) (*http.Request, error) {
	return func(server string) (*http.Request, error) {
		path := op.path
		query := url.Values{}
		header := http.Header{}
		for _, p := range op.params {
			v := fmt.Sprint(d.sample(p.schema, p.name, 0))
			if p.name == param {
				v = text
			} else if !p.required {
				continue
			}
			switch p.in {
			case "path":
				path = strings.ReplaceAll(path, "{"+p.name+"}", url.PathEscape(v))
			case "query":
				query.Set(p.name, v)
			case "header":
				header.Set(p.name, v)
			}
		}
		target := server + op.prefix + path
		if len(query) > 0 {
			target += "?" + query.Encode()
		}
		var buf bytes.Buffer
		switch op.contentType {
		case "application/json":
			encodeJSON(&buf, body)
		case "application/x-www-form-urlencoded", "multipart/form-data":
			fields := formFields(d, op, body.(map[string]any))
			if op.contentType == "multipart/form-data" {
				mw := multipart.NewWriter(&buf)
				for _, name := range sortedNames(fields) {
					if fields[name] == nil {
						fw, _ := mw.CreateFormFile(name, "contacts.csv")
						_, _ = io.WriteString(fw, "email\nlead@example.com\n")
						continue
					}
					_ = mw.WriteField(name, fields[name].(string))
				}
				_ = mw.Close()
				header.Set("Content-Type", mw.FormDataContentType())
			} else {
				form := url.Values{}
				for name, v := range fields {
					form.Set(name, v.(string))
				}
				buf.WriteString(form.Encode())
				header.Set("Content-Type", op.contentType)
			}
		}
		var reader io.Reader
		if op.contentType != "" {
			reader = &buf
			if header.Get("Content-Type") == "" {
				header.Set("Content-Type", op.contentType)
			}
		}
		req, err := http.NewRequest(op.method, target, reader)
		if err != nil {
			return nil, err
		}
		maps.Copy(req.Header, header)
		return req, nil
	}
}

// formFields are a form body's required fields with samples (nil for a file), overridden by set.
func formFields(d schemaDoc, op *probeOp, set map[string]any) map[string]any {
	s := d.merged(op.body)
	props, _ := s["properties"].(map[string]any)
	fields := map[string]any{}
	for _, r := range s["required"].([]any) {
		name := r.(string)
		ps := d.merged(props[name])
		if format, _ := ps["format"].(string); format == "binary" {
			fields[name] = nil
			continue
		}
		fields[name] = fmt.Sprint(d.sample(ps, name, 0))
	}
	maps.Copy(fields, set)
	return fields
}

// TestHostileInputNeverAnswers5xx sends, to every operation of the contract with a full-access key, each
// text field (path, query and header parameters, body fields at any depth, form fields) as a NUL-containing
// string, as invalid UTF-8 bytes and as 100,000 characters, and each integer as 2^31 and -2^63. Every answer
// must be below 500 (or the 501 of an operation not built yet, or the 503 of a capability not configured) and
// every refusal the JSON envelope with a code.
func TestHostileInputNeverAnswers5xx(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	d, ops := probeOps(t)
	var all []probe
	for i := range ops {
		all = append(all, probes(d, &ops[i])...)
	}
	// Each key may send 10,000 requests a minute: enough keys that the probe is never throttled.
	var keys []string
	for i := 0; i <= len(all)/8000; i++ {
		keys = append(keys, env.Bootstrap(t, fmt.Sprintf("hostile%d", i)).APIKey)
	}
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
		next     = make(chan int)
	)
	fail := func(p probe, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf("%s %s (%s) %s: %s", p.op.method, p.op.path, p.op.id, p.field+" = "+p.value.name, fmt.Sprintf(format, args...)))
	}
	for range 8 {
		wg.Go(func() {
			for i := range next {
				p := all[i]
				req, err := p.build(env.Server.URL)
				if err != nil {
					fail(p, "build: %v", err)
					continue
				}
				req.Header.Set("Authorization", "Bearer "+keys[i%len(keys)])
				resp, err := client.Do(req)
				if err != nil {
					fail(p, "%v", err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				checkHostileAnswer(p, resp, body, fail)
			}
		})
	}
	for i := range all {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("%d hostile requests over %d operations", len(all), len(ops))
	sort.Strings(failures)
	if len(failures) > 40 {
		failures = append(failures[:40], fmt.Sprintf("... and %d more", len(failures)-40))
	}
	require.Empty(t, failures, "\n"+strings.Join(failures, "\n"))
}

// jsonRPCFailure reports whether body is a JSON-RPC 2.0 error answer carrying its request id.
func jsonRPCFailure(body []byte) bool {
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code int `json:"code"`
			Data struct {
				RequestID string `json:"request_id"`
			} `json:"data"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &m) == nil && m.JSONRPC == "2.0" && m.Error.Code < 0 && m.Error.Data.RequestID != ""
}

// checkHostileAnswer asserts one answer: no 5xx but a 501 not_implemented or a 503 capability not configured,
// and every error in the envelope.
func checkHostileAnswer(p probe, resp *http.Response, body []byte, fail func(probe, string, ...any)) {
	if resp.StatusCode < 400 {
		return
	}
	var env struct {
		Error     string `json:"error"`
		Message   string `json:"message"`
		Code      string `json:"code"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Code == "" || env.Message == "" || env.RequestID == "" {
		if oauthProtocol[p.op.id] && env.Error != "" {
			return // RFC 6749 answers {error, error_description}
		}
		if p.op.id == "mcp_post_message" && resp.StatusCode == 400 && jsonRPCFailure(body) {
			return // JSON-RPC failures are answered in JSON-RPC (the contract's 400)
		}
		fail(p, "%d without the envelope: %.200s", resp.StatusCode, body)
		return
	}
	// 501 is an operation not built yet; 503 a capability this deployment has not configured (a sign-in
	// provider, passkeys), as the contract declares; a timeout or retry is still a failure.
	notYet := resp.StatusCode == 501 && env.Code == "not_implemented"
	unconfigured := resp.StatusCode == 503 && env.Code != "timeout" && env.Code != "canceled" && env.Code != "retry"
	if resp.StatusCode >= 500 && !notYet && !unconfigured {
		fail(p, "%d %s: %s", resp.StatusCode, env.Code, env.Message)
	}
	// Text no column can store is refused before anything else, with a code and the field's name.
	if p.value.name == "NUL" || p.value.name == "invalid UTF-8" {
		if resp.StatusCode != 400 || env.Code != "invalid_text" || !strings.Contains(env.Message, p.label) {
			fail(p, "want 400 invalid_text naming %s, got %d %s: %s", p.label, resp.StatusCode, env.Code, env.Message)
		}
	}
	// An integer no column holds is refused by the decoder, which names the field; a 64-bit one by its own
	// rule, which names it too.
	if p.value.name == "2^31" || p.value.name == "-2^63" {
		if resp.StatusCode != 400 || (env.Code != "number_out_of_range" && !p.wide) || !strings.Contains(env.Message, p.label) {
			fail(p, "want 400 number_out_of_range naming %s, got %d %s: %s", p.label, resp.StatusCode, env.Code, env.Message)
		}
	}
}

// oauthProtocol lists the OAuth endpoints whose errors follow RFC 6749 rather than the envelope.
var oauthProtocol = map[string]bool{"oauth_issue_token": true, "oauth_revoke_token": true, "oauth_register_client": true}
