package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/ory/fosite"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// AuthorizeParams are the parameters of an authorization request, in the order the consent page's CSRF token
// binds them.
var AuthorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"}

// AuthorizeRequest is an authorization request that passed every check: what the consent page shows and
// posts back.
type AuthorizeRequest struct {
	// Client is the app asking.
	Client *Client
	// Params are the request's parameters as the page posts them back; scope is filled in when it was omitted.
	Params url.Values
	// Scopes is what the app asks for.
	Scopes auth.Permission

	ar fosite.AuthorizeRequester
}

// RedirectError is an authorization failure reported to the app by sending the browser back to its redirect
// URI with `error` and `state` (RFC 6749 §4.1.2.1).
type RedirectError struct {
	Location    string
	Code        string
	Description string
}

// Error implements error.
func (e *RedirectError) Error() string { return "redirect " + e.Code + ": " + e.Description }

// errorLocation is redirectURI carrying an authorization error.
func errorLocation(redirectURI, code, description, state string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	q.Set("error", code)
	if description != "" {
		q.Set("error_description", description)
	}
	if state != "" {
		q.Set("state", state)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// challengeFormat is a PKCE code challenge: base64url of a SHA-256 digest is 43 characters; RFC 7636 allows
// 43 to 128 of the unreserved set.
var challengeFormat = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// pkceProblem explains what is wrong with the PKCE parameters of a request for c, or "" when nothing is.
// fosite checks the same when it issues the code; the consent page must refuse before it asks anyone.
func pkceProblem(c *Client, challenge, method string) string {
	switch {
	case challenge == "" && method != "":
		return "code_challenge_method was sent without code_challenge."
	case challenge == "" && c.IsPublic():
		return "This client is public: it must send a PKCE code_challenge with code_challenge_method=S256."
	case challenge == "":
		return ""
	case method != "S256":
		return "code_challenge_method must be S256; plain is not supported."
	case !challengeFormat.MatchString(challenge):
		return "code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'."
	}
	return ""
}

// CheckAuthorize validates an authorization request in the order of RFC 6749 §4.1.2.1. An unknown client_id
// or a redirect_uri that is not exactly one the app registered is an *apierror.Error (400, never redirected:
// the redirect target cannot be trusted). Every other problem is a *RedirectError.
func (p *Provider) CheckAuthorize(ctx context.Context, in url.Values) (*AuthorizeRequest, error) {
	q := url.Values{}
	for _, k := range AuthorizeParams {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	client, err := p.store.Client(ctx, q.Get("client_id"))
	if errors.Is(err, fosite.ErrNotFound) {
		return nil, apierror.BadRequest("unknown_client", "No OAuth application has this client_id.")
	}
	if err != nil {
		return nil, err
	}
	redirect := q.Get("redirect_uri")
	if !client.HasRedirectURI(redirect) {
		return nil, apierror.BadRequest("redirect_uri_mismatch",
			"redirect_uri is not exactly one of the application's registered redirect URIs.")
	}
	fail := func(code, description string) error {
		return &RedirectError{Location: errorLocation(redirect, code, description, q.Get("state")), Code: code, Description: description}
	}
	if q.Get("response_type") != "code" {
		return nil, fail("unsupported_response_type", "Only response_type=code is supported.")
	}
	if q.Get("scope") == "" {
		q.Set("scope", ScopeString(client.AllowedScopes()))
	}
	scopes, err := ParseScope(q.Get("scope"))
	if err != nil {
		return nil, fail("invalid_scope", "The request names an "+err.Error()+".")
	}
	if extra := scopes &^ client.AllowedScopes(); extra != 0 {
		return nil, fail("invalid_scope", "The application may not request "+ScopeString(extra)+".")
	}
	if scopes == 0 {
		return nil, fail("invalid_scope", "The request names no scope.")
	}
	if problem := pkceProblem(client, q.Get("code_challenge"), q.Get("code_challenge_method")); problem != "" {
		return nil, fail("invalid_request", problem)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, p.AuthorizationEndpoint()+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	ar, err := p.fosite.NewAuthorizeRequest(ctx, r)
	if errors.Is(err, fosite.ErrInvalidState) {
		// state is optional here (PKCE binds the answer to the request) and may be short; fosite insists on 8
		// characters and no setting lowers that. Its state check is the last one it makes, so the request it
		// returns is complete.
		err = nil
	}
	if err != nil {
		rfc := fosite.ErrorToRFC6749Error(err)
		if rfc.CodeField >= 500 {
			return nil, apierror.Internal(err)
		}
		return nil, fail(rfc.ErrorField, rfc.GetDescription())
	}
	return &AuthorizeRequest{Client: client, Params: q, Scopes: scopes, ar: ar}, nil
}

// DenyLocation is where the browser goes when the person declines.
func (p *Provider) DenyLocation(a *AuthorizeRequest) string {
	return errorLocation(a.Params.Get("redirect_uri"), "access_denied", "The person declined to authorize the application.", a.Params.Get("state"))
}

// ConsentToken is the consent form's CSRF token: an HMAC over the browser's session and the authorization
// request, so a decision can only be posted from the page this server rendered for that session and request.
func (p *Provider) ConsentToken(sessionID uuid.UUID, a *AuthorizeRequest) string {
	mac := hmac.New(sha256.New, p.csrfKey)
	mac.Write(sessionID[:])
	for _, k := range AuthorizeParams {
		mac.Write([]byte{0})
		mac.Write([]byte(a.Params.Get(k)))
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CheckConsentToken reports whether token is the consent token of sessionID and a.
func (p *Provider) CheckConsentToken(sessionID uuid.UUID, a *AuthorizeRequest, token string) bool {
	return hmac.Equal([]byte(p.ConsentToken(sessionID, a)), []byte(token))
}

// Organization is one organization the consent page offers.
type Organization struct {
	ID   uuid.UUID
	Name string
}

// memberPermissions is what userID may do in the organization of tx; pgx.ErrNoRows when not a member.
func memberPermissions(ctx context.Context, tx pgx.Tx, q *dbq.Queries, org, userID uuid.UUID) (dbq.OrganizationForMemberRow, auth.OrgPermission, error) {
	r, err := q.OrganizationForMember(ctx, tx, dbq.OrganizationForMemberParams{OrganizationID: org, UserID: userID})
	if err != nil {
		return r, 0, err
	}
	role, err := orgs.ParseRole(r.Role)
	if err != nil {
		return r, 0, nil
	}
	return r, role.Permissions(r.CustomRolePermissions.Int64), nil
}

// ApprovableOrganizations lists the organizations where userID may authorize apps (permission
// manage_api_keys), oldest membership first.
func (p *Provider) ApprovableOrganizations(ctx context.Context, userID uuid.UUID) ([]Organization, error) {
	memberships, err := p.queries.UserMemberships(ctx, p.pool, userID)
	if err != nil {
		return nil, err
	}
	var out []Organization
	for _, m := range memberships {
		err := db.WithOrgTx(ctx, p.pool, m.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			r, perms, err := memberPermissions(ctx, tx, p.queries, m.OrganizationID, userID)
			if err != nil || !perms.Has(auth.ManageAPIKeys) {
				return err
			}
			out = append(out, Organization{ID: m.OrganizationID, Name: r.Name})
			return nil
		})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
	}
	return out, nil
}

// Approve records the approval of a by userID for org, who must hold manage_api_keys there: in one
// transaction it replaces the app's live grant in org with a new one (audited) and issues the authorization
// code through fosite. It returns where to send the browser: the redirect URI with code and state. An
// organization the person is not a member of is a 404.
func (p *Provider) Approve(ctx context.Context, a *AuthorizeRequest, userID, org uuid.UUID) (string, error) {
	grantID, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	var location string
	err = db.WithOrgTx(ctx, p.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, perms, err := memberPermissions(ctx, tx, p.queries, org, userID)
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.NotFound("not_found", "Organization not found.")
		}
		if err != nil {
			return err
		}
		if !perms.Has(auth.ManageAPIKeys) {
			return apierror.Forbidden("permission_denied", "Authorizing an app needs permission to manage API keys in this organization.")
		}
		replaced, err := p.queries.OAuthGrantRevokeLive(ctx, tx, dbq.OAuthGrantRevokeLiveParams{
			OrganizationID: org, ClientID: a.Client.ID, Reason: "replaced"})
		if err != nil {
			return err
		}
		replacedIDs := make([]string, len(replaced))
		for i, g := range replaced {
			replacedIDs[i] = g.ID.String()
			if err := p.queries.OAuthTokenDeleteByGrant(ctx, tx, dbq.OAuthTokenDeleteByGrantParams{OrganizationID: org, GrantID: g.ID}); err != nil {
				return err
			}
		}
		if _, err := p.queries.OAuthGrantCreate(ctx, tx, dbq.OAuthGrantCreateParams{
			OrganizationID: org, ID: grantID, ClientID: a.Client.ID, UserID: userID, Scopes: int64(a.Scopes)}); err != nil {
			// A concurrent approval of the same app in the same organization won the live grant.
			return db.Classify(err, "A grant of this app")
		}
		endpointID, err := p.replaceManagedEndpoint(ctx, tx, org, a.Client)
		if err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "oauth_grant.created", EntityType: audit.EntityOAuthGrant,
			EntityID: grantID.String(), Metadata: map[string]any{
				"client": a.Client.ClientID, "app_name": a.Client.Name, "scopes": ScopeNames(a.Scopes),
				"replaced_grants": replacedIDs, "webhook_endpoint_id": endpointID,
			}}); err != nil {
			return err
		}

		// fosite's request id is the grant id: every code and token of this approval belongs to the grant.
		a.ar.SetID(grantID.String())
		for _, s := range ScopeNames(a.Scopes) {
			a.ar.GrantScope(s)
		}
		fctx, release := p.store.Guard(p.store.WithTx(ctx, tx))
		defer release()
		resp, err := p.fosite.NewAuthorizeResponse(fctx, a.ar, &Session{GrantID: grantID, OrganizationID: org, UserID: userID})
		if err != nil {
			rfc := fosite.ErrorToRFC6749Error(err)
			if rfc.CodeField >= 500 {
				return apierror.Internal(err)
			}
			return &RedirectError{Location: errorLocation(a.Params.Get("redirect_uri"), rfc.ErrorField, rfc.GetDescription(), a.Params.Get("state")),
				Code: rfc.ErrorField, Description: rfc.GetDescription()}
		}
		u, err := url.Parse(a.Params.Get("redirect_uri"))
		if err != nil {
			return err
		}
		q := u.Query()
		for k, vs := range resp.GetParameters() {
			q[k] = vs
		}
		if q.Get("state") == "" {
			q.Del("state")
		}
		u.RawQuery = q.Encode()
		location = u.String()
		return nil
	})
	return location, err
}

// replaceManagedEndpoint gives the app its managed webhook endpoint in org, in the transaction that creates
// its grant there: the one a replaced grant had goes (its deliveries with it) and, when the app has a
// webhook_url, a new one points at it, unverified until the app echoes a challenge (sent after the commit;
// nothing here touches the network). The endpoint has no secret of its own: it signs with the app's. It
// returns the new endpoint's id, "" when the app has no webhook_url.
func (p *Provider) replaceManagedEndpoint(ctx context.Context, tx pgx.Tx, org uuid.UUID, c *Client) (string, error) {
	if _, err := p.queries.WebhookEndpointDeleteManaged(ctx, tx, dbq.WebhookEndpointDeleteManagedParams{
		OrganizationID: org, OauthClientID: c.ID}); err != nil {
		return "", err
	}
	if c.WebhookUrl == "" {
		return "", nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	if _, err := p.queries.WebhookEndpointCreateManaged(ctx, tx, dbq.WebhookEndpointCreateManagedParams{
		OrganizationID: org, ID: id, Url: c.WebhookUrl, Description: ManagedEndpointDescription(c.Name), OauthClientID: c.ID,
	}); err != nil {
		return "", err
	}
	return id.String(), nil
}

// ManagedEndpointDescription is the description of an app's managed endpoint, which the organization sees
// in its endpoint list.
func ManagedEndpointDescription(appName string) string {
	d := "Managed by the OAuth app " + appName
	if r := []rune(d); len(r) > 500 {
		d = string(r[:500])
	}
	return d
}
