package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/gen/toolspec"
	"github.com/outflowhq/outflow/internal/agents/tools"
)

// catalogEntry is a tool definition derived from the contract, with the generated server's name of its
// operation (the key of Routes and the method name on Handler) and its parsed input schema.
type catalogEntry struct {
	def       tools.Definition
	operation string
	schema    *jsonschema.Schema
}

// toolCatalog reads the derived definitions once per process (they are compiled in) and names each one's
// operation the way the generated router does. A definition the router does not know is a stale
// gen/toolspec: `make generate` rewrites it with gen/api.
var toolCatalog = sync.OnceValues(func() ([]catalogEntry, error) {
	var defs []tools.Definition
	if err := json.Unmarshal(toolspec.Definitions, &defs); err != nil {
		return nil, fmt.Errorf("agent tools: read gen/toolspec: %w", err)
	}
	router, err := api.NewServer(nil, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]catalogEntry, 0, len(defs))
	for _, def := range defs {
		route, ok := router.FindRoute(def.Method, pathParam.ReplaceAllString(def.Path, "x"))
		if !ok || route.OperationID() != def.OperationID {
			return nil, fmt.Errorf("agent tools: the generated router has no operation %s at %s %s; run make generate", def.OperationID, def.Method, def.Path)
		}
		var schema jsonschema.Schema
		if err := json.Unmarshal(def.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("agent tools: the input schema of %s: %w", def.Name, err)
		}
		out = append(out, catalogEntry{def: def, operation: route.Name(), schema: &schema})
	}
	return out, nil
})

// pathParam matches a path template's parameters, which the router lookup fills with a placeholder.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// implemented reports whether one of Handler's operation groups implements the operation: one that only
// notYet answers (501 not_implemented) must not be offered to agents.
func implemented(operation string) bool {
	h := reflect.TypeFor[Handler]()
	for i := range h.NumField() {
		f := h.Field(i)
		if !f.Anonymous || f.Type == reflect.TypeFor[notYet]() {
			continue
		}
		if _, ok := f.Type.MethodByName(operation); ok {
			return true
		}
	}
	return false
}
