package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	ht "github.com/ogen-go/ogen/http"

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
}

// NewAgentTools builds the REST side of registry; the pool answers whoami.
func NewAgentTools(pool *pgxpool.Pool, registry *tools.Registry) *AgentTools {
	return &AgentTools{pool: pool, registry: registry, queries: dbq.New()}
}

// toolView is how a tool is described to agents over REST.
type toolView struct {
	Name        string             `json:"name"`
	Title       string             `json:"title"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
	// Permissions is the scope bitmask an API key or OAuth token needs, as keys carry theirs; Scopes names it.
	Permissions uint64   `json:"permissions"`
	Scopes      []string `json:"scopes"`
	Sessions    bool     `json:"sessions"`
	ReadOnly    bool     `json:"read_only"`
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
		views[i] = toolView{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			Permissions: uint64(t.Scope), Scopes: t.Scope.Names(), Sessions: t.Sessions, ReadOnly: t.ReadOnly}
		if views[i].Scopes == nil {
			views[i].Scopes = []string{}
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

// RegisterTools registers the tools of the areas that exist. Each runs the API operation it mirrors through
// ops (the assembled api.Handler), so a tool call gets the operation's exact behaviour; mirror adds the
// route's own admission check in front. Later areas register theirs the same way.
func (h *AgentTools) RegisterTools(ops api.Handler) error {
	var errs []error
	register := func(t tools.Tool, err error) {
		if err == nil {
			err = h.registry.Register(t)
		}
		errs = append(errs, err)
	}
	register(h.whoamiTool(), nil)

	register(mirror(api.APIKeysListOperation, tools.Tool{
		Name: "api_keys_list", Title: "List API keys",
		Description: "Lists the organization's API keys, newest first, without secrets. Pass pagination.next_cursor " +
			"back as cursor for the next page.",
		InputSchema: toolInput(map[string]*jsonschema.Schema{
			"cursor": {Type: "string", Description: "next_cursor of the previous page."},
			"limit":  {Type: "integer", Description: "Page size 1 to 100 (default 50; out of range falls back to 50)."},
		}),
		ReadOnly: true,
	}, func(ctx context.Context, a struct {
		Cursor *string `json:"cursor"`
		Limit  *int    `json:"limit"`
	}) (any, error) {
		return ops.APIKeysList(ctx, api.APIKeysListParams{Cursor: toolOptString(a.Cursor), Limit: toolOptInt(a.Limit)})
	}))
	register(mirror(api.APIKeysGetOperation, tools.Tool{
		Name: "api_keys_get", Title: "Get an API key",
		Description: "Returns one API key of the organization by id, without its secret.",
		InputSchema: toolInput(map[string]*jsonschema.Schema{"id": toolUUID("The API key id.")}, "id"),
		ReadOnly:    true,
	}, func(ctx context.Context, a struct {
		ID uuid.UUID `json:"id"`
	}) (any, error) {
		return ops.APIKeysGet(ctx, api.APIKeysGetParams{ID: a.ID})
	}))
	register(mirror(api.APIKeysListPermissionsOperation, tools.Tool{
		Name: "api_keys_permissions", Title: "List API key permissions",
		Description: "Returns the permission catalog (name, bit value, description, category) and the read_only " +
			"and full_access presets, to choose a key's permissions bitmask.",
		InputSchema: toolInput(nil),
		ReadOnly:    true,
	}, func(ctx context.Context, _ struct{}) (any, error) {
		return ops.APIKeysListPermissions(ctx)
	}))
	register(mirror(api.APIKeysUsageSummaryOperation, tools.Tool{
		Name: "api_keys_usage_summary", Title: "Summarize API key usage",
		Description: "Counts active, revoked and expired keys and the organization's API requests, errors and " +
			"average latency over the last 24 hours.",
		InputSchema: toolInput(nil),
		ReadOnly:    true,
	}, func(ctx context.Context, _ struct{}) (any, error) {
		return ops.APIKeysUsageSummary(ctx)
	}))

	register(mirror(api.AnalyticsAuditLogsListOperation, tools.Tool{
		Name: "audit_logs_list", Title: "List audit log entries",
		Description: "Lists the organization's audit trail, newest first: who did what to which resource, when and " +
			"from where. Filter by actor_id (a user, or the API key that acted), entity_type and entity_id, action " +
			"(a verb such as create or revoke, or a full action such as team.created), one UTC date, or " +
			"start_date/end_date. Pass pagination.next_cursor back as cursor for the next page.",
		InputSchema: toolInput(map[string]*jsonschema.Schema{
			"limit":       {Type: "integer", Minimum: toolFloat(auditLimitMin), Maximum: toolFloat(auditLimitMax), Default: json.RawMessage("50"), Description: "Page size 10 to 200."},
			"cursor":      toolUUID("next_cursor of the previous page (an entry id)."),
			"actor_id":    toolUUID("Entries made by this user (directly or through their API keys) or by this API key."),
			"entity_id":   toolUUID("Entries about this resource."),
			"entity_type": {Type: "string", Description: "Entries about this kind of resource, for example team, role, api_key, organization."},
			"action":      {Type: "string", Description: "A verb (create, update, delete, revoke, ...) or a full action (team.created)."},
			"date":        {Type: "string", Format: "date", Description: "One UTC day, YYYY-MM-DD; start_date and end_date override it."},
			"start_date":  {Type: "string", Description: "RFC 3339 date-time or YYYY-MM-DD (inclusive)."},
			"end_date":    {Type: "string", Description: "RFC 3339 date-time or YYYY-MM-DD (inclusive)."},
		}),
		ReadOnly: true,
	}, func(ctx context.Context, a struct {
		Limit      *int       `json:"limit"`
		Cursor     *uuid.UUID `json:"cursor"`
		ActorID    *uuid.UUID `json:"actor_id"`
		EntityID   *uuid.UUID `json:"entity_id"`
		EntityType *string    `json:"entity_type"`
		Action     *string    `json:"action"`
		Date       *string    `json:"date"`
		StartDate  *string    `json:"start_date"`
		EndDate    *string    `json:"end_date"`
	}) (any, error) {
		params := api.AnalyticsAuditLogsListParams{Limit: toolOptInt(a.Limit), Cursor: toolOptUUID(a.Cursor),
			ActorID: toolOptUUID(a.ActorID), EntityID: toolOptUUID(a.EntityID), EntityType: toolOptString(a.EntityType),
			Action: toolOptString(a.Action), StartDate: toolOptString(a.StartDate), EndDate: toolOptString(a.EndDate)}
		if a.Date != nil {
			d, err := time.Parse(time.DateOnly, *a.Date)
			if err != nil {
				return nil, tools.InvalidArguments("date must be a YYYY-MM-DD day.")
			}
			params.Date = api.NewOptDate(d)
		}
		return ops.AnalyticsAuditLogsList(ctx, params)
	}))

	register(mirror(api.OrganizationsListTeamsOperation, tools.Tool{
		Name: "teams_list", Title: "List teams",
		Description: "Lists the organization's teams with their members, sorted by name.",
		InputSchema: toolInput(nil),
		ReadOnly:    true,
	}, func(ctx context.Context, _ struct{}) (any, error) {
		return ops.OrganizationsListTeams(ctx)
	}))
	register(mirror(api.OrganizationsGetTeamOperation, tools.Tool{
		Name: "teams_get", Title: "Get a team",
		Description: "Returns one team with its members.",
		InputSchema: toolInput(map[string]*jsonschema.Schema{"id": toolUUID("The team id.")}, "id"),
		ReadOnly:    true,
	}, func(ctx context.Context, a struct {
		ID uuid.UUID `json:"id"`
	}) (any, error) {
		return ops.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: a.ID})
	}))
	return errors.Join(errs...)
}

// mirror completes t as the tool of operation op. Its scope and whether sessions may call it come from
// Routes, so a tool is never laxer than its route; Run admits the caller exactly as the request path admits
// callers of op (the handler is called directly, past that middleware), including the mailbox limit of a
// mailbox-scoped key on the argument named like the route's mailbox parameter, then decodes the arguments
// into A and runs run. An operation whose area has not shipped answers 501, as its route does.
func mirror[A any](op string, t tools.Tool, run func(ctx context.Context, args A) (any, error)) (tools.Tool, error) {
	r, ok := Routes[op]
	if !ok || r.Access != auth.AccessAny {
		return t, fmt.Errorf("agent tool %s: operation %s is not open to API keys and sessions in Routes", t.Name, op)
	}
	t.Scope, t.Sessions = r.Scope, true
	t.Run = func(ctx context.Context, raw json.RawMessage) (any, error) {
		p := auth.PrincipalFrom(ctx)
		if err := admit(p, op, r); err != nil {
			return nil, err
		}
		if r.MailboxParam != "" {
			for _, id := range toolMailboxes(raw, r.MailboxParam) {
				if !p.MayUseMailbox(id) {
					return nil, errMailboxNotFound
				}
			}
		}
		var args A
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return nil, tools.InvalidArguments(fmt.Sprintf("arguments of %s: %v", t.Name, err))
		}
		v, err := run(ctx, args)
		if errors.Is(err, ht.ErrNotImplemented) {
			return nil, apierror.New(http.StatusNotImplemented, "not_implemented",
				fmt.Sprintf("Tool %s is not available yet: operation %s is not implemented.", t.Name, op))
		}
		return v, err
	}
	return t, nil
}

// toolMailboxes reads the mailbox ids named by argument param: a uuid, a list of them, or a comma-separated
// string, as the route's parameter would carry them. Values that are not uuids are left to the operation.
func toolMailboxes(raw json.RawMessage, param string) []uuid.UUID {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return nil
	}
	var one string
	if json.Unmarshal(args[param], &one) == nil {
		return parseMailboxList(one)
	}
	var many []string
	_ = json.Unmarshal(args[param], &many)
	return parseMailboxList(strings.Join(many, ","))
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
		InputSchema: toolInput(nil),
		Sessions:    true,
		ReadOnly:    true,
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

// toolInput is the input schema of a tool taking the properties props (nil: no arguments); arguments it
// does not name are refused, so a misspelt filter fails loudly instead of being ignored.
func toolInput(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
}

// toolUUID is the schema of an id argument.
func toolUUID(description string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "uuid", Description: description}
}

func toolFloat(v float64) *float64 { return &v }

func toolOptString(v *string) api.OptString {
	if v == nil {
		return api.OptString{}
	}
	return api.NewOptString(*v)
}

func toolOptInt(v *int) api.OptInt {
	if v == nil {
		return api.OptInt{}
	}
	return api.NewOptInt(*v)
}

func toolOptUUID(v *uuid.UUID) api.OptUUID {
	if v == nil {
		return api.OptUUID{}
	}
	return api.NewOptUUID(*v)
}
