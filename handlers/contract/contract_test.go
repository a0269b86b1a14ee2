package contract_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// specOperationIDs lists every operationId of the contract.
func specOperationIDs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../openapi/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	var ids []string
	for _, item := range doc.Paths {
		for method, node := range item {
			switch method {
			case "get", "post", "put", "patch", "delete":
				var op struct {
					OperationID string `yaml:"operationId"`
				}
				require.NoError(t, node.Decode(&op))
				require.NotEmpty(t, op.OperationID)
				ids = append(ids, op.OperationID)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

var notImplementedID = regexp.MustCompile(`^Operation (\S+) is not implemented yet\.$`)

// TestEveryOperationAnswersPerContract walks the whole SDK. An operation whose area has not shipped must
// answer 501 not_implemented naming its operation id; any other answer must be a declared success, a client
// error or a 503 (capability not configured) in the envelope, never a 500 and never a body the SDK cannot
// decode and validate.
func TestEveryOperationAnswersPerContract(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	client := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	ids := specOperationIDs(t)

	called, answered501, notImplemented := 0, 0, map[string]bool{}
	for _, m := range apitest.SDKMethods(client) {
		t.Run(m.Name, func(t *testing.T) {
			out := apitest.Filler{}.Call(context.Background(), client, m)
			err, _ := out[len(out)-1].Interface().(error)
			called++
			if err == nil {
				return // a declared success, decoded and validated by the SDK
			}
			var se *api.ErrorStatusCode
			require.True(t, errors.As(err, &se), "%s: the answer is not one the contract declares: %v", m.Name, err)
			require.NotEqual(t, 500, se.StatusCode, "%s: %s", m.Name, se.Response.Message)
			require.NotEmpty(t, se.Response.RequestID)
			if se.StatusCode == 501 {
				require.Equal(t, "not_implemented", se.Response.Code)
				match := notImplementedID.FindStringSubmatch(se.Response.Message)
				require.NotNil(t, match, se.Response.Message)
				notImplemented[match[1]] = true
				answered501++
				return
			}
			// 503 is the contract's "capability unavailable" (a provider or passkeys not configured here).
			require.True(t, se.StatusCode < 500 || se.StatusCode == 503, "%s: %d %s", m.Name, se.StatusCode, se.Response.Message)
		})
	}
	require.Equal(t, len(ids), called, "every operation of the spec is called exactly once")
	for id := range notImplemented {
		require.Contains(t, ids, id, "501 names a real operation id")
	}
	// Each 501 names a different operation: a static segment routed to its {id} sibling (/unibox/count vs
	// /unibox/{id}) would name the sibling twice.
	require.Equal(t, answered501, len(notImplemented), "every call reached its own operation")
	t.Logf("%d operations called, %d not implemented yet", called, len(notImplemented))
}
