package handlers

import (
	"context"
	"net/url"
	"time"

	"github.com/go-faster/jx"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/apps"
)

// AppConnections implements the AppConnections group: the customer apps campaign app_action steps call, their
// signing secrets (shown on create and rotate only) and the connection test. The rules live in package apps;
// the route table has checked INTEGRATIONS (keys, OAuth) or manage_settings (sessions).
type AppConnections struct {
	store *apps.Store
	now   func() time.Time
}

// NewAppConnections builds the group over the connection store.
func NewAppConnections(store *apps.Store) *AppConnections {
	return &AppConnections{store: store, now: time.Now}
}

// appConnectionOf maps a connection, never with its secret.
func appConnectionOf(c dbq.AppConnection) api.AppConnection {
	var u url.URL
	if parsed, err := url.Parse(c.BaseUrl); err == nil {
		u = *parsed
	}
	return api.AppConnection{ID: c.ID, OrganizationID: api.NewOptUUID(c.OrganizationID), Name: c.Name, BaseURL: u,
		CreatedAt: api.NewOptDateTime(c.CreatedAt), UpdatedAt: api.NewOptDateTime(c.UpdatedAt)}
}

// AppConnectionsList answers the organization's connections, newest first.
func (h *AppConnections) AppConnectionsList(ctx context.Context) (*api.AppConnectionList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := h.store.List(ctx, org)
	if err != nil {
		return nil, err
	}
	out := &api.AppConnectionList{Data: make([]api.AppConnection, len(rows))}
	for i, r := range rows {
		out.Data[i] = appConnectionOf(r)
	}
	return out, nil
}

// AppConnectionsCreate registers a connection and answers its secret this once.
func (h *AppConnections) AppConnectionsCreate(ctx context.Context, req *api.AppConnectionsCreateReq) (*api.AppConnectionCreated, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	base := req.BaseURL.String()
	row, secret, err := h.store.Create(ctx, org, apps.Fields{Name: &req.Name, BaseURL: &base})
	if err != nil {
		return nil, err
	}
	return &api.AppConnectionCreated{Connection: appConnectionOf(row), Secret: secret}, nil
}

// AppConnectionsGet answers one connection.
func (h *AppConnections) AppConnectionsGet(ctx context.Context, params api.AppConnectionsGetParams) (*api.AppConnection, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	row, err := h.store.Get(ctx, org, params.ID)
	if err != nil {
		return nil, err
	}
	out := appConnectionOf(row)
	return &out, nil
}

// AppConnectionsUpdate changes the name or the base URL sent; the secret stays.
func (h *AppConnections) AppConnectionsUpdate(ctx context.Context, req *api.AppConnectionsUpdateReq, params api.AppConnectionsUpdateParams) (*api.AppConnection, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var f apps.Fields
	if req.Name.Set {
		f.Name = &req.Name.Value
	}
	if req.BaseURL.Set {
		base := req.BaseURL.Value.String()
		f.BaseURL = &base
	}
	row, err := h.store.Update(ctx, org, params.ID, f)
	if err != nil {
		return nil, err
	}
	out := appConnectionOf(row)
	return &out, nil
}

// AppConnectionsDelete removes a connection no app_action step names.
func (h *AppConnections) AppConnectionsDelete(ctx context.Context, params api.AppConnectionsDeleteParams) (api.AppConnectionsDeleteOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.store.Delete(ctx, org, params.ID); err != nil {
		return nil, err
	}
	return api.AppConnectionsDeleteOK{"id": jx.Raw(`"` + params.ID.String() + `"`), "deleted": jx.Raw("true")}, nil
}

// AppConnectionsRotateSecret issues a new secret, answered this once; the old one signs nothing more.
func (h *AppConnections) AppConnectionsRotateSecret(ctx context.Context, params api.AppConnectionsRotateSecretParams) (*api.AppConnectionsRotateSecretOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	secret, err := h.store.RotateSecret(ctx, org, params.ID)
	if err != nil {
		return nil, err
	}
	return &api.AppConnectionsRotateSecretOK{Secret: api.NewOptString(secret)}, nil
}

// AppConnectionsTest pings the app and answers what it found, always 200 for a known connection.
func (h *AppConnections) AppConnectionsTest(ctx context.Context, params api.AppConnectionsTestParams) (*api.AppConnectionTest, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := h.store.Test(ctx, org, params.ID, h.now())
	if err != nil {
		return nil, err
	}
	out := &api.AppConnectionTest{DNS: p.DNS, TLS: p.TLS, Connection: p.Connection, Authentication: p.Authentication,
		LatencyMs: int(p.Latency.Milliseconds())}
	if p.Status != 0 {
		out.Status = api.NewOptInt(p.Status)
	}
	if p.Failure != "" {
		out.Error = api.NewOptIssue(api.Issue{Code: apps.CodeConnectionFailed, Message: p.Failure, Fix: api.NewOptString(p.Fix)})
	}
	return out, nil
}
