package tools_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/agents/tools"
)

// contract is a small contract holding every shape the derivation handles.
const contract = `
openapi: 3.1.0
servers:
- url: http://127.0.0.1:8080/v1
paths:
  /emails/{id}/send:
    post:
      operationId: mailboxes_send
      summary: Send a one-off email
      description: |
        Sends one message.
      tags: [mailboxes]
      x-agent-hints: {read_only: false, destructive: false, idempotent: false, open_world: true}
      parameters:
      - $ref: '#/components/parameters/IdempotencyKey'
      - name: id
        in: path
        required: true
        description: The mailbox.
        schema: {type: string, format: uuid}
      - name: subject
        in: query
        schema: {type: string}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Send'}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object}}}}
        '202': {description: held, content: {application/json: {schema: {type: object}}}}
  /segments:
    get:
      operationId: segments_list
      summary: List segments
      tags: [segments]
      x-agent-hints: {read_only: true}
      parameters:
      - name: ids
        in: query
        schema: {type: array, items: {type: string}}
      - name: limit
        in: query
        schema: {type: integer, minimum: 1, maximum: 200, x-ogen-name: Limit}
      responses:
        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Group'}}}}
    post:
      operationId: segments_create
      summary: Create a segment
      tags: [segments]
      x-agent-hints: {read_only: false, destructive: false, idempotent: false}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Group'}
      responses:
        '201': {description: ok}
  /contacts:
    post:
      operationId: contacts_create
      summary: Create contacts
      tags: [contacts]
      x-agent-hints: {read_only: false, destructive: true, idempotent: true}
      requestBody:
        content:
          application/json:
            schema: {type: array, items: {type: object, properties: {email: {type: string}}}}
      responses:
        '201': {description: ok}
  /contacts/import:
    post:
      operationId: contacts_import
      summary: Import a file
      tags: [contacts]
      requestBody:
        content:
          multipart/form-data:
            schema: {type: object, properties: {file: {type: string}}}
      responses:
        '200': {description: ok}
  /contacts/export:
    post:
      operationId: contacts_export
      summary: Export a file
      tags: [contacts]
      responses:
        '200': {description: ok, content: {text/csv: {schema: {type: string}}}}
  /teams:
    get:
      operationId: organizations_list_teams
      summary: List teams
      tags: [organizations]
      x-agent-hints: {read_only: true}
      responses:
        '200': {description: ok}
    post:
      operationId: organizations_create_team
      summary: Create a team
      tags: [organizations]
      responses:
        '201': {description: ok}
  /auth/login:
    post:
      operationId: campaigns_public
      summary: Public
      tags: [campaigns]
      security: []
      responses:
        '200': {description: ok}
  /emails/onboarding/oauth/cli-start:
    post:
      operationId: mailboxes_oauth_cli_start
      summary: Start a consent
      tags: [mailboxes]
      responses:
        '200': {description: ok}
components:
  parameters:
    IdempotencyKey:
      name: Idempotency-Key
      in: header
      description: Makes a write safe to retry.
      schema: {type: string, maxLength: 255}
  schemas:
    Send:
      type: object
      required: [to, subject]
      properties:
        to: {type: array, items: {type: string}, example: [a@example.com]}
        subject: {type: string, maxLength: 998}
        mode: {$ref: '#/components/schemas/Mode', description: When it leaves.}
    Mode:
      type: string
      enum: [instant, scheduled]
      description: The mode.
    Group:
      type: object
      required: [name]
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: '#/components/schemas/Group'}}
`

func derived(t *testing.T) map[string]tools.Definition {
	t.Helper()
	defs, err := tools.Derive([]byte(contract))
	require.NoError(t, err)
	out := map[string]tools.Definition{}
	var names []string
	for _, d := range defs {
		out[d.Name] = d
		names = append(names, d.Name)
	}
	require.IsIncreasing(t, names)
	return out
}

// schemaOf parses a definition's input schema and checks it resolves as the registry will resolve it.
func schemaOf(t *testing.T, d tools.Definition) map[string]any {
	t.Helper()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(d.InputSchema, &s))
	_, err := s.Resolve(nil)
	require.NoError(t, err, d.Name)
	var out map[string]any
	require.NoError(t, json.Unmarshal(d.InputSchema, &out))
	return out
}

func TestDeriveSelectsTheOperationsAgentsUse(t *testing.T) {
	t.Parallel()
	defs := derived(t)
	names := []string{}
	for n := range defs {
		names = append(names, n)
	}
	require.ElementsMatch(t, []string{"contacts_create", "mailboxes_send", "segments_create", "segments_list", "teams_list"}, names,
		"public operations, other areas, file uploads and downloads and the listed exclusions are not tools; teams_list keeps its earlier name")
	require.Equal(t, "organizations_list_teams", defs["teams_list"].OperationID)
}

func TestDeriveBuildsTheInputFromParametersAndBody(t *testing.T) {
	t.Parallel()
	send := derived(t)["mailboxes_send"]
	require.Equal(t, "POST", send.Method)
	require.Equal(t, "/emails/{id}/send", send.Path)
	require.Equal(t, "Send a one-off email", send.Title)
	require.Equal(t, "Sends one message.", send.Description)
	require.Equal(t, tools.BodyFields, send.Body)
	require.True(t, send.BodyRequired)
	require.Equal(t, []tools.Param{
		{Argument: "idempotency_key", In: "header", Name: "Idempotency-Key"},
		{Argument: "id", In: "path", Name: "id"},
	}, send.Params, "the body's subject field replaces the query parameter of the same name")

	schema := schemaOf(t, send)
	require.Equal(t, "object", schema["type"])
	require.Equal(t, false, schema["additionalProperties"], "misspelt arguments are refused")
	require.Equal(t, []any{"id", "subject", "to"}, schema["required"], "path parameters and the body's required fields")
	props := schema["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": "string", "format": "uuid", "description": "The mailbox."}, props["id"])
	require.Equal(t, map[string]any{"type": "string", "maxLength": 255.0, "description": "Makes a write safe to retry."}, props["idempotency_key"])
	require.Equal(t, map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, props["to"], "example is not JSON Schema")
	require.Equal(t, map[string]any{"type": "string", "maxLength": 998.0}, props["subject"])
	require.Equal(t, map[string]any{"type": "string", "enum": []any{"instant", "scheduled"}, "description": "When it leaves."}, props["mode"],
		"a $ref is inlined, with the keywords beside it winning")

	list := schemaOf(t, derived(t)["segments_list"])
	require.Nil(t, list["required"])
	require.Equal(t, map[string]any{"type": "integer", "minimum": 1.0, "maximum": 200.0}, list["properties"].(map[string]any)["limit"], "extensions are dropped")
}

func TestDeriveKeepsRecursiveSchemasInDefs(t *testing.T) {
	t.Parallel()
	create := derived(t)["segments_create"]
	schema := schemaOf(t, create)
	props := schema["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Group"}}, props["children"])
	group := schema["$defs"].(map[string]any)["Group"].(map[string]any)
	require.Equal(t, []any{"name"}, group["required"])
	require.Equal(t, map[string]any{"$ref": "#/$defs/Group"}, group["properties"].(map[string]any)["children"].(map[string]any)["items"])
}

func TestDerivePassesABodyThatIsNotAnObjectAsOneArgument(t *testing.T) {
	t.Parallel()
	create := derived(t)["contacts_create"]
	require.Equal(t, tools.BodyValue, create.Body)
	require.False(t, create.BodyRequired)
	schema := schemaOf(t, create)
	require.Nil(t, schema["required"], "the body is optional")
	require.Equal(t, "array", schema["properties"].(map[string]any)["body"].(map[string]any)["type"])
}

func TestDeriveRefusesOperationsAToolCannotExpress(t *testing.T) {
	t.Parallel()
	for name, op := range map[string]string{
		"cookie parameter": `parameters: [{name: sid, in: cookie, schema: {type: string}}]`,
		"other header":     `parameters: [{name: X-Trace, in: header, schema: {type: string}}]`,
		"object in query":  `parameters: [{name: filter, in: query, schema: {type: object}}]`,
		"body field named like a path parameter": `parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}`,
	} {
		spec := `
paths:
  /segments/{id}:
    post:
      operationId: segments_odd
      tags: [segments]
      x-agent-hints: {read_only: false, destructive: false, idempotent: false}
      ` + op + `
      responses: {'200': {description: ok}}
`
		_, err := tools.Derive([]byte(spec))
		require.Error(t, err, name)
		require.ErrorContains(t, err, "segments_odd", name)
	}
}

func TestTheCommittedDefinitionsAreThoseOfTheContract(t *testing.T) {
	t.Parallel()
	spec, err := os.ReadFile("../../../openapi/openapi.yaml")
	require.NoError(t, err)
	defs, err := tools.Derive(spec)
	require.NoError(t, err)
	committed, err := os.ReadFile("../../../gen/toolspec/definitions.json")
	require.NoError(t, err)
	var want []tools.Definition
	require.NoError(t, json.Unmarshal(committed, &want))
	require.Equal(t, len(want), len(defs), "gen/toolspec is stale: run make generate")
	for i := range defs {
		require.Equal(t, want[i].Name, defs[i].Name, "gen/toolspec is stale: run make generate")
		require.JSONEq(t, string(want[i].InputSchema), string(defs[i].InputSchema), defs[i].Name)
		require.Equal(t, want[i].Hints, defs[i].Hints, "gen/toolspec is stale: run make generate")
		schemaOf(t, defs[i])
	}
}
