package handlers_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/ogen-go/ogen/middleware"
	"github.com/ogen-go/ogen/openapi"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// specOperation is one operation of openapi/openapi.yaml as far as the route table cares.
type specOperation struct {
	method, path, id string
	public           bool
	// params are the operation's path and query parameter names (path-level ones included).
	params map[string]bool
}

var pathParamRe = regexp.MustCompile(`\{[^}]+\}`)

// specOperations reads every operation of the contract.
func specOperations(t *testing.T) []specOperation {
	t.Helper()
	raw, err := os.ReadFile("../openapi/openapi.yaml")
	require.NoError(t, err)
	type param struct {
		Ref  string `yaml:"$ref"`
		Name string `yaml:"name"`
		In   string `yaml:"in"`
	}
	type operation struct {
		OperationID string  `yaml:"operationId"`
		Security    *[]any  `yaml:"security"`
		Parameters  []param `yaml:"parameters"`
	}
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Parameters map[string]param `yaml:"parameters"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	names := func(into map[string]bool, ps []param) {
		for _, p := range ps {
			if p.Ref != "" {
				p = doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			}
			if p.In == "path" || p.In == "query" {
				into[p.Name] = true
			}
		}
	}
	var out []specOperation
	for path, item := range doc.Paths {
		var common []param
		if n, ok := item["parameters"]; ok {
			require.NoError(t, n.Decode(&common))
		}
		for method, node := range item {
			switch method {
			case "get", "post", "put", "patch", "delete":
			default:
				continue
			}
			var op operation
			require.NoError(t, node.Decode(&op))
			o := specOperation{method: strings.ToUpper(method), path: path, id: op.OperationID,
				public: op.Security != nil && len(*op.Security) == 0, params: map[string]bool{}}
			names(o.params, common)
			names(o.params, op.Parameters)
			out = append(out, o)
		}
	}
	return out
}

// TestRoutesCoverEveryOperation proves the table is complete: every operation of the contract has exactly
// one entry, nothing else does, `security: []` is exactly the public entries, and every mailbox parameter
// names a real parameter of its operation.
func TestRoutesCoverEveryOperation(t *testing.T) {
	t.Parallel()
	router, err := api.NewServer(api.UnimplementedHandler{}, api.UnimplementedHandler{}, handlers.NewSecurity(nil))
	require.NoError(t, err)
	ops := specOperations(t)
	require.NotEmpty(t, ops)
	seen := map[string]bool{}
	for _, op := range ops {
		route, ok := router.FindRoute(op.method, pathParamRe.ReplaceAllString(op.path, "x"))
		require.True(t, ok, "%s %s routes", op.method, op.path)
		require.Equal(t, op.id, route.OperationID(), "%s %s", op.method, op.path)
		name := route.Name()
		require.False(t, seen[name], "%s appears once", name)
		seen[name] = true

		req, ok := handlers.Routes[name]
		require.True(t, ok, "Routes has no entry for %s (%s %s)", name, op.method, op.path)
		require.Equal(t, op.public, req.Access == auth.AccessPublic,
			"%s: `security: []` in the spec if and only if the route is public", name)
		require.Contains(t, []auth.Access{auth.AccessPublic, auth.AccessAny, auth.AccessSession}, req.Access, name)
		if req.Access != auth.AccessAny {
			require.Zero(t, req.Scope, "%s: only operations open to keys name a scope", name)
		}
		if req.Access == auth.AccessPublic {
			require.Zero(t, req.OrgPermission, name)
			require.Empty(t, req.MailboxParam, name)
		}
		require.True(t, req.Scope.Valid(), "%s names only defined scope bits", name)
		require.Zero(t, req.OrgPermission&^auth.AllOrgPermissions, "%s names only defined permissions", name)
		if req.MailboxParam != "" {
			require.True(t, op.params[req.MailboxParam], "%s: mailbox parameter %q is a path or query parameter", name, req.MailboxParam)
		}
		if strings.HasPrefix(op.path, "/emails/{id}") {
			require.Equal(t, "id", req.MailboxParam, "%s: every /emails/{id} route is mailbox-scoped", name)
		}
	}
	for name := range handlers.Routes {
		require.True(t, seen[name], "Routes has %s, which the contract does not", name)
	}
	require.Len(t, handlers.Routes, len(ops))
}

// admitted reports what Authorize answers for one call: nil when the handler would run.
func admitted(op string, p *auth.Principal, params middleware.Parameters) error {
	ctx := context.Background()
	if p != nil {
		ctx = auth.WithPrincipal(ctx, p)
	}
	called := false
	_, err := handlers.Authorize(middleware.Request{Context: ctx, OperationName: op, Params: params},
		func(middleware.Request) (middleware.Response, error) {
			called = true
			return middleware.Response{}, nil
		})
	if err == nil && !called {
		return errors.New("neither refused nor passed on")
	}
	return err
}

func requireRefusal(t *testing.T, err error, status int, code string) *apierror.Error {
	t.Helper()
	var e *apierror.Error
	require.ErrorAs(t, err, &e, "want %d %s", status, code)
	require.Equal(t, status, e.Status, e.Message)
	require.Equal(t, code, e.Code)
	return e
}

// TestAuthorizeEnforcesEachRequirement drives the middleware with constructed callers for every entry: the
// least credential the entry asks for passes, one bit less is refused with the documented code.
func TestAuthorizeEnforcesEachRequirement(t *testing.T) {
	t.Parallel()
	org := uuid.New()
	for op, req := range handlers.Routes {
		key := func(perms auth.Permission) *auth.Principal {
			return &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: org, Permissions: perms}
		}
		oauth := func(perms auth.Permission) *auth.Principal {
			return &auth.Principal{Kind: auth.KindOAuth, OrganizationID: org, Permissions: perms}
		}
		session := func(perms auth.OrgPermission) *auth.Principal {
			return &auth.Principal{Kind: auth.KindSession, OrganizationID: org, UserID: uuid.New(), OrgPermissions: perms}
		}
		switch req.Access {
		case auth.AccessPublic:
			require.NoError(t, admitted(op, nil, nil), op)
			continue
		case auth.AccessSession:
			requireRefusal(t, admitted(op, key(auth.FullAccess), nil), 403, "session_required")
			requireRefusal(t, admitted(op, oauth(auth.FullAccess), nil), 403, "session_required")
		case auth.AccessAny:
			require.NoError(t, admitted(op, key(req.Scope), nil), "%s: a key with exactly its scope passes", op)
			require.NoError(t, admitted(op, oauth(req.Scope), nil), "%s: an OAuth token with exactly its scope passes", op)
			if req.Scope != 0 {
				e := requireRefusal(t, admitted(op, key(auth.FullAccess&^req.Scope), nil), 403, "missing_scope")
				for _, name := range req.Scope.Names() {
					require.Contains(t, e.Message, name, "%s: the refusal names the missing scope", op)
				}
				requireRefusal(t, admitted(op, oauth(auth.FullAccess&^req.Scope), nil), 403, "missing_scope")
			}
		}
		requireRefusal(t, admitted(op, nil, nil), 401, "missing_credential")
		require.NoError(t, admitted(op, session(req.OrgPermission), nil), "%s: a session with exactly its permission passes", op)
		if req.OrgPermission != 0 {
			requireRefusal(t, admitted(op, session(auth.AllOrgPermissions&^req.OrgPermission), nil), 403, "permission_denied")
			noOrg := session(auth.AllOrgPermissions)
			noOrg.OrganizationID = uuid.Nil
			requireRefusal(t, admitted(op, noOrg, nil), 400, "organization_required")
		}
	}

	t.Run("a session without an organization reaches only what is not organization work", func(t *testing.T) {
		t.Parallel()
		lost := &auth.Principal{Kind: auth.KindSession, UserID: uuid.New()}
		for _, op := range []string{api.AuthGetMeOperation, api.OrganizationsListOperation, api.OrganizationsSwitchOperation,
			api.OrganizationsAcceptInvitationOperation, api.SystemGetReadinessOperation} {
			require.NoError(t, admitted(op, lost, nil), op)
		}
		for _, op := range []string{api.OrganizationsGetCurrentOperation, api.OrganizationsListMembersOperation,
			api.OrganizationsListTeamsOperation, api.AgentPoliciesGetEffectiveOperation} {
			requireRefusal(t, admitted(op, lost, nil), 400, "organization_required")
		}
	})
	t.Run("an operation without an entry is an internal error", func(t *testing.T) {
		t.Parallel()
		e := requireRefusal(t, admitted("NoSuchOperation", &auth.Principal{Kind: auth.KindAPIKey, Permissions: auth.FullAccess}, nil),
			500, "internal_error")
		require.NotContains(t, e.Message, "NoSuchOperation", "the operation is logged, not shown")
	})
	t.Run("a key without scopes is told which one it lacks", func(t *testing.T) {
		t.Parallel()
		e := requireRefusal(t, admitted(api.APIKeysListOperation, &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: org}, nil),
			403, "missing_scope")
		require.Contains(t, e.Message, "API_KEYS")
	})
}

// TestAuthorizeMailboxScoping checks part 1 rule 6 on the middleware alone: a key limited to mailbox A gets
// the 404 of a foreign id for any other mailbox named in a path or query parameter, however ogen decoded it.
func TestAuthorizeMailboxScoping(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	scoped := &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: uuid.New(), Permissions: auth.FullAccess,
		AllowedMailboxes: []uuid.UUID{a}}
	unrestricted := &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: scoped.OrganizationID, Permissions: auth.FullAccess}
	session := &auth.Principal{Kind: auth.KindSession, OrganizationID: scoped.OrganizationID, OrgPermissions: auth.AllOrgPermissions}
	path := func(v any) middleware.Parameters {
		return middleware.Parameters{{Name: "id", In: openapi.LocationPath}: v}
	}
	query := func(v any) middleware.Parameters {
		return middleware.Parameters{{Name: "email_id", In: openapi.LocationQuery}: v}
	}
	for _, tc := range []struct {
		op           string
		own, foreign middleware.Parameters
	}{
		{api.MailboxesGetOperation, path(a), path(b)},
		{api.MailboxesSendOperation, path(a), path(b)},
		{api.MailboxesWarmupStopOperation, path(a), path(b)},
		{api.AnalyticsAccountGetOperation, path(a), path(b)},
		{api.UniboxListOperation, query(api.NewOptUUID(a)), query(api.NewOptUUID(b))},
		{api.UniboxCountOperation, query(api.NewOptUUID(a)), query(api.NewOptUUID(b))},
		{api.AnalyticsWarmupOperation, query(api.NewOptString(a.String())), query(api.NewOptString(b.String()))},
	} {
		require.NoError(t, admitted(tc.op, scoped, tc.own), tc.op)
		requireRefusal(t, admitted(tc.op, scoped, tc.foreign), 404, "mailbox_not_found")
		require.NoError(t, admitted(tc.op, unrestricted, tc.foreign), "%s: an unrestricted key uses every mailbox", tc.op)
		require.NoError(t, admitted(tc.op, session, tc.foreign), "%s: sessions use every mailbox", tc.op)
	}
	// No filter at all is the handler's business (it lists only the key's mailboxes); a value that is not a
	// uuid is the handler's to refuse.
	require.NoError(t, admitted(api.UniboxListOperation, scoped, query(api.OptUUID{})))
	require.NoError(t, admitted(api.AnalyticsWarmupOperation, scoped, query(api.NewOptString("not-a-uuid"))))
}

// powerlessMember signs up a person, makes them a member of org whose custom role grants nothing, and
// returns their session acting in org.
func powerlessMember(t *testing.T, env *apitest.Env, org uuid.UUID, email string) *api.Client {
	t.Helper()
	ctx := context.Background()
	self := env.Client(t, env.SignUp(t, email).AccessToken)
	me, err := self.AuthGetMe(ctx)
	require.NoError(t, err)
	role := uuid.New()
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		if _, err := q.CustomRoleCreate(ctx, tx, dbq.CustomRoleCreateParams{OrganizationID: org, ID: role, Name: "Nothing"}); err != nil {
			return err
		}
		return q.MembershipCreate(ctx, tx, dbq.MembershipCreateParams{OrganizationID: org, UserID: me.ID, Role: role.String()})
	}))
	pair, err := self.OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: org}, api.OrganizationsSwitchParams{})
	require.NoError(t, err)
	return env.Client(t, pair.AccessToken)
}

// TestRouteRequirementsThroughTheSDK walks every operation of the generated client against the real server:
// a key holding every scope but the route's gets 403 missing_scope, a full-access key on a session-only
// route gets 403 session_required, and a member whose role grants nothing gets 403 permission_denied. The
// gate answers before any handler, so implemented and not-yet-built operations alike are covered.
func TestRouteRequirementsThroughTheSDK(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := env.Bootstrap(t, "acme").OrganizationID
	powerless := powerlessMember(t, env, org, "powerless@acme.example")

	ctx := context.Background()
	call := apitest.Filler{}.CallErr
	walked := 0
	for _, m := range apitest.SDKMethods(env.Client(t, "")) {
		req, ok := handlers.Routes[m.Name]
		require.True(t, ok, "the SDK's %s has a route requirement", m.Name)
		walked++
		t.Run(m.Name, func(t *testing.T) {
			switch {
			case req.Access == auth.AccessSession:
				err := call(ctx, env.Client(t, scopedKey(t, env, org, auth.FullAccess)), m)
				requireAPIError(t, err, 403, "session_required")
			case req.Access == auth.AccessAny && req.Scope != 0:
				err := call(ctx, env.Client(t, scopedKey(t, env, org, auth.FullAccess&^req.Scope)), m)
				requireAPIError(t, err, 403, "missing_scope")
				var se *api.ErrorStatusCode
				require.ErrorAs(t, err, &se)
				for _, name := range req.Scope.Names() {
					require.Contains(t, se.Response.Message, name)
				}
			}
			if req.Access != auth.AccessPublic && req.OrgPermission != 0 {
				requireAPIError(t, call(ctx, powerless, m), 403, "permission_denied")
			}
		})
	}
	require.Equal(t, len(handlers.Routes), walked, "the SDK has one method per route")
}

// TestMailboxScopedKeyThroughTheSDK checks part 1 rule 6 end to end: a key limited to mailbox A is refused
// for mailbox B with the 404 of a foreign id, while A passes the gate.
func TestMailboxScopedKeyThroughTheSDK(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := env.Bootstrap(t, "acme").OrganizationID
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	scoped := env.Client(t, scopedKey(t, env, org, auth.FullAccess, a))

	_, err := scoped.MailboxesGet(ctx, api.MailboxesGetParams{ID: b})
	requireAPIError(t, err, 404, "mailbox_not_found")
	_, err = scoped.MailboxesWarmupStart(ctx, api.MailboxesWarmupStartParams{ID: b})
	requireAPIError(t, err, 404, "mailbox_not_found")
	_, err = scoped.UniboxCount(ctx, api.UniboxCountParams{EmailID: api.NewOptUUID(b)})
	requireAPIError(t, err, 404, "mailbox_not_found")

	// Mailbox A is not refused by the gate; what the mailbox area answers for it is its own business.
	_, err = scoped.MailboxesGet(ctx, api.MailboxesGetParams{ID: a})
	var se *api.ErrorStatusCode
	if errors.As(err, &se) {
		require.NotEqual(t, "mailbox_not_found", se.Response.Code)
	}
	// An unrestricted key is not held to any list.
	_, err = env.Client(t, scopedKey(t, env, org, auth.FullAccess)).MailboxesGet(ctx, api.MailboxesGetParams{ID: b})
	if errors.As(err, &se) {
		require.NotEqual(t, "mailbox_not_found", se.Response.Code)
	}
}
