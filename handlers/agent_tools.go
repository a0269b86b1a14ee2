package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-faster/jx"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/tools"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// AgentTools serves the agent tool registry over REST (GET /ai/tools, POST /ai/tools/{name}/call) and
// registers the tools of the API areas that exist. The MCP endpoint serves the same registry.
type AgentTools struct {
	pool     *pgxpool.Pool
	registry *tools.Registry
	queries  *dbq.Queries
	// operations are the operations the registered tools run, by tool name (whoami runs none).
	operations map[string]tools.Definition
}

// NewAgentTools builds the REST side of registry; the pool answers whoami.
func NewAgentTools(pool *pgxpool.Pool, registry *tools.Registry) *AgentTools {
	return &AgentTools{pool: pool, registry: registry, queries: dbq.New(), operations: map[string]tools.Definition{}}
}

// toolView is how a tool is described to agents over REST.
type toolView struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Permissions is the scope bitmask an API key or OAuth token needs, as keys carry theirs; Scopes names it.
	Permissions uint64   `json:"permissions"`
	Scopes      []string `json:"scopes"`
	Sessions    bool     `json:"sessions"`
	// ReadOnly, Destructive, Idempotent and OpenWorld are the tool's hints (tools.Hints), which MCP lists as
	// readOnlyHint, destructiveHint, idempotentHint and openWorldHint.
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"open_world"`
	// Operation is the API operation the tool calls (absent for whoami).
	Operation *toolOperation `json:"operation,omitempty"`
}

// toolOperation names the REST operation behind a tool, so a developer can read its reference.
type toolOperation struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

// AgentToolsList lists the tools the caller may call: `{tools: [...]}`, sorted by name.
func (h *AgentTools) AgentToolsList(ctx context.Context) (api.AgentToolsListOK, error) {
	p := auth.PrincipalFrom(ctx)
	if p == nil {
		return nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	tools := h.registry.List(p)
	views := make([]toolView, len(tools))
	for i, t := range tools {
		views[i] = toolView{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.SchemaJSON(),
			Permissions: uint64(t.Scope), Scopes: t.Scope.Names(), Sessions: t.Sessions,
			ReadOnly: t.Hints.ReadOnly, Destructive: t.Hints.Destructive, Idempotent: t.Hints.Idempotent, OpenWorld: t.Hints.OpenWorld}
		if views[i].Scopes == nil {
			views[i].Scopes = []string{}
		}
		if op, ok := h.operations[t.Name]; ok {
			views[i].Operation = &toolOperation{ID: op.OperationID, Method: op.Method, Path: op.Path}
		}
	}
	raw, err := json.Marshal(views)
	if err != nil {
		return nil, err
	}
	return api.AgentToolsListOK{"tools": raw}, nil
}

// AgentToolsCall runs a tool: 200 `{tool, status: "completed", result}`, or 202 with status "accepted" when
// the tool took the call without a final result.
func (h *AgentTools) AgentToolsCall(ctx context.Context, req *api.AgentToolsCallReq, params api.AgentToolsCallParams) (api.AgentToolsCallRes, error) {
	var e jx.Encoder
	req.Arguments.Encode(&e)
	res, err := h.registry.Call(ctx, params.Name, e.Bytes())
	if err != nil {
		return nil, err
	}
	result, err := json.Marshal(res.Value)
	if err != nil {
		return nil, err
	}
	name, _ := json.Marshal(params.Name)
	if res.Accepted {
		return &api.AgentToolsCallAccepted{"tool": name, "status": jx.Raw(`"accepted"`), "result": result}, nil
	}
	return &api.AgentToolsCallOK{"tool": name, "status": jx.Raw(`"completed"`), "result": result}, nil
}

// RegisterTools registers the tools: whoami, and one tool per operation of the contract an agent works with
// (tools.Selected) that is implemented and open to API keys and OAuth tokens in Routes, with the input schema
// and hints derived from the contract (gen/toolspec) and the route's scope. Each call is served by api, the server's
// whole request path, under prefix (where the API is mounted), so it meets every check the REST call meets.
func (h *AgentTools) RegisterTools(api http.Handler, prefix string) error {
	catalog, err := toolCatalog()
	if err != nil {
		return err
	}
	errs := []error{h.registry.Register(h.whoamiTool())}
	for _, c := range catalog {
		route := Routes[c.operation]
		if route.Access != auth.AccessAny || !implemented(c.operation) {
			continue
		}
		h.operations[c.def.Name] = c.def
		errs = append(errs, h.registry.Register(tools.Tool{
			Name: c.def.Name, Title: c.def.Title, Description: c.def.Description, InputSchema: c.schema,
			Scope: route.Scope, Sessions: true, Hints: c.def.Hints,
			Run: c.def.Dispatch(api, prefix),
		}))
	}
	return errors.Join(errs...)
}

// whoami is what the whoami tool answers.
type whoami struct {
	Organization *whoamiOrganization `json:"organization"`
	Credential   whoamiCredential    `json:"credential"`
	UserID       *uuid.UUID          `json:"user_id"`
	// Permissions and Scopes are an API key's or OAuth token's scope bitmask and its names.
	Permissions *uint64  `json:"permissions,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	// Role and OrgPermissions are a session's role in the organization and what it allows.
	Role           string   `json:"role,omitempty"`
	OrgPermissions []string `json:"org_permissions,omitempty"`
	// Tools names the tools the caller may call.
	Tools []string `json:"tools"`
}

type whoamiOrganization struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

type whoamiCredential struct {
	Kind string    `json:"kind"`
	ID   uuid.UUID `json:"id"`
}

// whoamiTool describes the caller: an agent's first call, to learn which organization it acts in and what
// its credential may do.
func (h *AgentTools) whoamiTool() tools.Tool {
	return tools.Tool{
		Name: "whoami", Title: "Who am I",
		Description: "Describes the caller: the organization it acts in, its credential, the scopes it holds and " +
			"the tools it may call. Call it first to learn what this connection can do.",
		// No arguments; any sent are refused.
		InputSchema: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
		Sessions:    true,
		Hints:       tools.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, _ json.RawMessage) (any, error) {
			p := auth.PrincipalFrom(ctx)
			if p == nil {
				return nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
			}
			out := whoami{Credential: whoamiCredential{Kind: string(p.Kind), ID: p.CredentialID}, Tools: []string{}}
			if p.UserID != uuid.Nil {
				out.UserID = &p.UserID
			}
			if p.IsSession() {
				out.Role = p.Role
				for _, n := range auth.OrgPermissionNames {
					if p.OrgPermissions.Has(n.Permission) {
						out.OrgPermissions = append(out.OrgPermissions, n.Name)
					}
				}
			} else {
				bits := uint64(p.Permissions)
				out.Permissions, out.Scopes = &bits, p.Permissions.Names()
			}
			for _, t := range h.registry.List(p) {
				out.Tools = append(out.Tools, t.Name)
			}
			if p.OrganizationID == uuid.Nil {
				return out, nil
			}
			err := db.WithOrgTx(ctx, h.pool, p.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
				o, err := h.queries.OrganizationGet(ctx, tx, p.OrganizationID)
				if err != nil {
					return db.Classify(err, "Organization")
				}
				out.Organization = &whoamiOrganization{ID: o.ID, Name: o.Name}
				return nil
			})
			return out, err
		},
	}
}
