package handlers

import (
	"context"
	"net/url"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
	"github.com/outflowhq/outflow/oauth"
)

const sortOAuthApplications = "oauth_applications:created_at:desc"

// oauthAppFields are an application's registrable fields, validated.
type oauthAppFields struct {
	name, description, logo, website, webhookURL string
	redirectURIs, domains, events                []string
	scopes                                       auth.Permission
}

// validHTTPURL accepts "" or an absolute http(s) URL of at most 2000 characters.
func validHTTPURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || len(v) > 2000 || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return apierror.BadRequest("invalid_url", field+" must be an http(s) URL of at most 2000 characters.")
	}
	return nil
}

// check validates the fields the way create and update both require.
func (f *oauthAppFields) check() error {
	name, err := orgName(f.name)
	if err != nil {
		return err
	}
	f.name = name
	if len([]rune(f.description)) > 2000 {
		return apierror.BadRequest("invalid_description", "description must be at most 2000 characters.")
	}
	if err := validHTTPURL("logo", f.logo); err != nil {
		return err
	}
	if err := validHTTPURL("website", f.website); err != nil {
		return err
	}
	if err := oauth.ValidateRedirectURIs(f.redirectURIs, false); err != nil {
		return apierror.BadRequest("invalid_redirect_uri", err.Error()+".")
	}
	if f.scopes == 0 {
		return apierror.BadRequest("invalid_scopes", "scopes must name at least one scope.")
	}
	if f.domains, err = oauth.NormalizeWebhookDomains(f.domains); err != nil {
		return apierror.BadRequest("invalid_webhook_domain", err.Error()+".")
	}
	if err := oauth.ValidateWebhookURL(f.webhookURL, f.domains); err != nil {
		return apierror.BadRequest("invalid_webhook_url", err.Error()+".")
	}
	return nil
}

func scopesFrom(in []api.OAuthScope) (auth.Permission, error) {
	names := make([]string, len(in))
	for i, s := range in {
		names[i] = string(s)
	}
	p, err := oauth.ParseScopeNames(names)
	if err != nil {
		return 0, apierror.BadRequest("unknown_scope", err.Error()+".")
	}
	return p, nil
}

func eventsFrom(in []api.WebhookEventType) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		if !slices.Contains(out, string(e)) {
			out = append(out, string(e))
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// oauthApplicationOf maps an application row.
func oauthApplicationOf(r dbq.OauthClient) api.OAuthApplication {
	c := oauth.Client{OauthClient: r}
	names := oauth.ScopeNames(c.AllowedScopes())
	out := api.OAuthApplication{
		ID: r.ID, OrganizationID: r.OrganizationID.UUID, ClientID: r.ClientID, ClientType: api.OAuthClientType(r.ClientType),
		Name: r.Name, RedirectUris: orEmpty(r.RedirectUris), Scopes: make([]api.OAuthScope, len(names)),
		AllowedWebhookDomains: orEmpty(r.AllowedWebhookDomains), WebhookURL: r.WebhookUrl,
		WebhookEvents: make([]api.WebhookEventType, len(r.WebhookEvents)), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for i, n := range names {
		out.Scopes[i] = api.OAuthScope(n)
	}
	for i, e := range r.WebhookEvents {
		out.WebhookEvents[i] = api.WebhookEventType(e)
	}
	if r.Description != "" {
		out.Description = api.NewOptString(r.Description)
	}
	if r.Logo != "" {
		out.Logo = api.NewOptString(r.Logo)
	}
	if r.Website != "" {
		out.Website = api.NewOptString(r.Website)
	}
	return out
}

// oauthAppAudit is the metadata an application's audit entries keep: what it is and where it points.
func oauthAppAudit(r dbq.OauthClient) map[string]any {
	return map[string]any{"name": r.Name, "client": r.ClientID, "client_type": r.ClientType,
		"scopes": oauth.ScopeNames(auth.Permission(uint64(r.Scopes))), "redirect_uris": r.RedirectUris, "webhook_url": r.WebhookUrl}
}

// OAuthApplicationsCreate registers an app of the current organization; the client secret (confidential apps)
// and the webhook secret are in this answer.
func (h *OAuth) OAuthApplicationsCreate(ctx context.Context, req *api.OAuthApplicationCreate, _ api.OAuthApplicationsCreateParams) (*api.OAuthApplicationWithSecrets, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	scopes, err := scopesFrom(req.Scopes)
	if err != nil {
		return nil, err
	}
	f := oauthAppFields{name: req.Name, description: req.Description.Value, logo: req.Logo.Value, website: req.Website.Value,
		webhookURL: req.WebhookURL.Value, redirectURIs: req.RedirectUris, domains: req.AllowedWebhookDomains,
		events: eventsFrom(req.WebhookEvents), scopes: scopes}
	if err := f.check(); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	clientType, method := oauth.ClientConfidential, oauth.AuthMethodBasic
	var secret string
	var hash []byte
	if req.ClientType.Or(api.OAuthApplicationCreateClientTypeConfidential) == api.OAuthApplicationCreateClientTypePublic {
		clientType, method = oauth.ClientPublic, oauth.AuthMethodNone
	} else if secret, hash, err = oauth.NewClientSecret(); err != nil {
		return nil, err
	}
	webhookSecret := oauth.NewWebhookSecret()
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.OAuthApplicationCreate(ctx, tx, dbq.OAuthApplicationCreateParams{
			ID: id, OrganizationID: org, ClientID: oauth.NewClientID(), ClientType: clientType, TokenEndpointAuthMethod: method,
			SecretHash: hash, Name: f.name, Description: f.description, Logo: f.logo, Website: f.website,
			RedirectUris: f.redirectURIs, GrantTypes: []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
			Scopes: int64(f.scopes), AllowedWebhookDomains: f.domains, WebhookUrl: f.webhookURL, WebhookEvents: f.events,
			WebhookSecretSealed: oauth.SealWebhookSecret(h.keyring, id, webhookSecret),
		})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "oauth_application.created", EntityType: audit.EntityOAuthApplication,
			EntityID: id.String(), Metadata: oauthAppAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	a := oauthApplicationOf(row)
	out := &api.OAuthApplicationWithSecrets{
		ID: a.ID, OrganizationID: a.OrganizationID, ClientID: a.ClientID, ClientType: a.ClientType, Name: a.Name,
		Description: a.Description, Logo: a.Logo, Website: a.Website, RedirectUris: a.RedirectUris, Scopes: a.Scopes,
		AllowedWebhookDomains: a.AllowedWebhookDomains, WebhookURL: a.WebhookURL, WebhookEvents: a.WebhookEvents,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, WebhookSecret: webhookSecret,
	}
	if secret != "" {
		out.ClientSecret = api.NewOptString(secret)
	}
	return out, nil
}

// OAuthApplicationsList lists the current organization's apps, newest first.
func (h *OAuth) OAuthApplicationsList(ctx context.Context, params api.OAuthApplicationsListParams) (*api.OAuthApplicationList, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortOAuthApplications, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.OauthClient, error) {
			args := dbq.OAuthApplicationListParams{OrganizationID: org, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.OAuthApplicationList(ctx, tx, args)
		},
		func(r dbq.OauthClient) timeKey { return timeKey{At: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.OAuthApplicationList{Data: make([]api.OAuthApplication, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = oauthApplicationOf(r)
	}
	return out, nil
}

// OAuthApplicationsGet returns one app of the current organization.
func (h *OAuth) OAuthApplicationsGet(ctx context.Context, params api.OAuthApplicationsGetParams) (*api.OAuthApplication, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID})
		return db.Classify(err, "OAuth application")
	})
	if err != nil {
		return nil, err
	}
	out := oauthApplicationOf(row)
	return &out, nil
}

// OAuthApplicationsUpdate changes the fields sent and checks the result as create does. Narrowing the scopes
// narrows existing grants at once (tokens carry the intersection); it never widens them.
func (h *OAuth) OAuthApplicationsUpdate(ctx context.Context, req *api.OAuthApplicationUpdate, params api.OAuthApplicationsUpdateParams) (*api.OAuthApplication, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.OAuthApplicationGetForUpdate(ctx, tx, dbq.OAuthApplicationGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		f := oauthAppFields{name: req.Name.Or(cur.Name), description: req.Description.Or(cur.Description),
			logo: req.Logo.Or(cur.Logo), website: req.Website.Or(cur.Website), webhookURL: req.WebhookURL.Or(cur.WebhookUrl),
			redirectURIs: cur.RedirectUris, domains: cur.AllowedWebhookDomains, events: cur.WebhookEvents,
			scopes: auth.Permission(uint64(cur.Scopes))}
		var changed []string
		for field, set := range map[string]bool{"name": req.Name.Set, "description": req.Description.Set, "logo": req.Logo.Set,
			"website": req.Website.Set, "webhook_url": req.WebhookURL.Set, "redirect_uris": req.RedirectUris != nil,
			"scopes": req.Scopes != nil, "allowed_webhook_domains": req.AllowedWebhookDomains != nil, "webhook_events": req.WebhookEvents != nil} {
			if set {
				changed = append(changed, field)
			}
		}
		slices.Sort(changed)
		if req.RedirectUris != nil {
			f.redirectURIs = req.RedirectUris
		}
		if req.Scopes != nil {
			if f.scopes, err = scopesFrom(req.Scopes); err != nil {
				return err
			}
		}
		if req.AllowedWebhookDomains != nil {
			f.domains = req.AllowedWebhookDomains
		}
		if req.WebhookEvents != nil {
			f.events = eventsFrom(req.WebhookEvents)
		}
		if err := f.check(); err != nil {
			return err
		}
		row, err = h.queries.OAuthApplicationUpdate(ctx, tx, dbq.OAuthApplicationUpdateParams{
			OrganizationID: org, ID: params.ID, Name: f.name, Description: f.description, Logo: f.logo, Website: f.website,
			RedirectUris: f.redirectURIs, Scopes: int64(f.scopes), AllowedWebhookDomains: f.domains,
			WebhookUrl: f.webhookURL, WebhookEvents: f.events,
		})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		meta := oauthAppAudit(row)
		meta["changed"] = changed
		if row.WebhookUrl != cur.WebhookUrl {
			// The managed endpoints in every organization that authorized the app follow its webhook_url; a new
			// host makes them unverified again.
			touched, err := h.queries.OAuthAppWebhookEndpointSync(ctx, tx, dbq.OAuthAppWebhookEndpointSyncParams{
				ClientID: row.ID, Rearm: urlHost(row.WebhookUrl) != urlHost(cur.WebhookUrl)})
			if err != nil {
				return err
			}
			meta["webhook_endpoints_updated"] = touched
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "oauth_application.updated", EntityType: audit.EntityOAuthApplication,
			EntityID: row.ID.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	out := oauthApplicationOf(row)
	return &out, nil
}

// OAuthApplicationsDelete removes an app: its grants in every organization, and their tokens, go with it.
func (h *OAuth) OAuthApplicationsDelete(ctx context.Context, params api.OAuthApplicationsDeleteParams) error {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.OAuthApplicationGetForUpdate(ctx, tx, dbq.OAuthApplicationGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		if _, err := h.queries.OAuthApplicationDelete(ctx, tx, dbq.OAuthApplicationDeleteParams{OrganizationID: org, ID: params.ID}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "oauth_application.deleted", EntityType: audit.EntityOAuthApplication,
			EntityID: cur.ID.String(), Metadata: oauthAppAudit(cur)})
	})
}

// OAuthApplicationsGetWebhookSecret returns the app's current webhook signing secret.
func (h *OAuth) OAuthApplicationsGetWebhookSecret(ctx context.Context, params api.OAuthApplicationsGetWebhookSecretParams) (*api.OAuthApplicationWebhookSecret, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var secret string
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		secret, err = oauth.OpenWebhookSecret(h.keyring, row.ID, row.WebhookSecretSealed)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.OAuthApplicationWebhookSecret{WebhookSecret: secret}, nil
}

// OAuthApplicationsRotateWebhookSecret replaces the app's webhook signing secret and returns the new one.
func (h *OAuth) OAuthApplicationsRotateWebhookSecret(ctx context.Context, params api.OAuthApplicationsRotateWebhookSecretParams) (*api.OAuthApplicationWebhookSecret, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	secret := oauth.NewWebhookSecret()
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.OAuthApplicationSetWebhookSecret(ctx, tx, dbq.OAuthApplicationSetWebhookSecretParams{
			OrganizationID: org, ID: params.ID, WebhookSecretSealed: oauth.SealWebhookSecret(h.keyring, params.ID, secret)})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "OAuth application not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRotateSecret, Event: "oauth_application.webhook_secret_rotated",
			EntityType: audit.EntityOAuthApplication, EntityID: params.ID.String()})
	})
	if err != nil {
		return nil, err
	}
	return &api.OAuthApplicationWebhookSecret{WebhookSecret: secret}, nil
}

// OAuthApplicationsListWebhookEndpoints lists the app's managed endpoints, one per organization that
// authorized it (created on authorization, removed on revocation), oldest install first.
func (h *OAuth) OAuthApplicationsListWebhookEndpoints(ctx context.Context, params api.OAuthApplicationsListWebhookEndpointsParams) (*api.OAuthApplicationWebhookEndpointList, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var rows []dbq.WebhookEndpoint
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID}); err != nil {
			return db.Classify(err, "OAuth application")
		}
		rows, err = h.queries.OAuthAppWebhookEndpointList(ctx, tx, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.OAuthApplicationWebhookEndpointList{Endpoints: make([]api.OAuthApplicationWebhookEndpoint, len(rows))}
	for i, r := range rows {
		out.Endpoints[i] = api.OAuthApplicationWebhookEndpoint{
			ID: r.ID, OrganizationID: r.OrganizationID, URL: r.Url, Enabled: r.Enabled, VerifiedAt: nilDateTimeOf(r.VerifiedAt),
			ConsecutiveFailures: int(r.ConsecutiveFailures), LastSuccessAt: nilDateTimeOf(r.LastSuccessAt),
			LastFailureAt: nilDateTimeOf(r.LastFailureAt),
		}
	}
	return out, nil
}
