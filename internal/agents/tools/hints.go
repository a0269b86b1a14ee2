package tools

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// HintsExtension is the operation extension of the contract that declares what the operation does to its
// environment, for the tool that calls it: `x-agent-hints: {read_only: true}` for an operation that changes
// nothing, `{read_only: false, destructive: <bool>, idempotent: <bool>}` for any other, and in either case
// `open_world: true` when the call reaches outside Outflow (left out otherwise). The rules for deciding each
// hint are in the package documentation.
const HintsExtension = "x-agent-hints"

// Hints say what calling a tool does, so an agent's client can ask before the calls that matter and skip the
// question for the ones that do not (MCP's readOnlyHint, destructiveHint and idempotentHint). They are
// declared once, on the operation in the contract, and reach MCP and GET /ai/tools unchanged.
type Hints struct {
	// ReadOnly: the call changes nothing.
	ReadOnly bool `json:"read_only"`
	// Destructive: the call may delete, overwrite what people set, or end something for good.
	Destructive bool `json:"destructive"`
	// Idempotent: calling again with the same arguments has no further effect.
	Idempotent bool `json:"idempotent"`
	// OpenWorld: the call reaches systems or people outside Outflow (mail goes out or is set going, a mail
	// server, DNS or another service is contacted); false when it only reads and writes Outflow's own data.
	OpenWorld bool `json:"open_world"`
}

// Consistent reports why h contradicts itself ("" when it does not): a call that changes nothing destroys
// nothing and has no further effect when repeated.
func (h Hints) Consistent() string {
	switch {
	case h.ReadOnly && h.Destructive:
		return "a read-only operation cannot be destructive"
	case h.ReadOnly && !h.Idempotent:
		return "a read-only operation is idempotent"
	}
	return ""
}

// hintsOf reads op's declared hints and checks them against the method's own meaning (HTTP semantics):
// a GET changes nothing, a DELETE destroys what it names and repeating it does nothing more, a PUT replaces
// and is idempotent.
func hintsOf(method string, op map[string]any) (Hints, error) {
	raw, ok := op[HintsExtension]
	if !ok {
		return Hints{}, fmt.Errorf("no %s: declare what the operation does (see internal/agents/tools/doc.go)", HintsExtension)
	}
	decl := mapOf(raw)
	if decl == nil {
		return Hints{}, fmt.Errorf("%s must be an object of read_only, destructive, idempotent and open_world", HintsExtension)
	}
	values := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(decl)) {
		if !slices.Contains([]string{"read_only", "destructive", "idempotent", "open_world"}, key) {
			return Hints{}, fmt.Errorf("%s has %s; it takes read_only, destructive, idempotent and open_world", HintsExtension, key)
		}
		v, ok := decl[key].(bool)
		if !ok {
			return Hints{}, fmt.Errorf("%s.%s must be true or false", HintsExtension, key)
		}
		values[key] = v
	}
	readOnly, ok := values["read_only"]
	if !ok {
		return Hints{}, fmt.Errorf("%s needs read_only", HintsExtension)
	}
	_, destructive := values["destructive"]
	_, idempotent := values["idempotent"]
	openWorld, stated := values["open_world"]
	switch {
	case readOnly && (destructive || idempotent):
		return Hints{}, fmt.Errorf("%s: a read-only operation states read_only alone (it is idempotent and not destructive), with open_world when true", HintsExtension)
	case !readOnly && (!destructive || !idempotent):
		return Hints{}, fmt.Errorf("%s: an operation that changes something states destructive and idempotent too", HintsExtension)
	case stated && !openWorld:
		return Hints{}, fmt.Errorf("%s: open_world is stated only when true (an operation without it stays inside Outflow)", HintsExtension)
	}
	h := Hints{ReadOnly: readOnly, Destructive: values["destructive"], Idempotent: readOnly || values["idempotent"], OpenWorld: openWorld}
	var problem string
	switch {
	case method == http.MethodGet && !h.ReadOnly:
		problem = "a GET must be read-only"
	case method == http.MethodDelete && !(h.Destructive && h.Idempotent):
		problem = "a DELETE must be destructive and idempotent"
	case method == http.MethodPut && !h.Idempotent:
		problem = "a PUT must be idempotent"
	}
	if problem != "" {
		return Hints{}, fmt.Errorf("%s: %s", HintsExtension, problem)
	}
	return h, nil
}
