package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Handler is the whole API: the operation groups embedded, plus the error mapping ogen calls.
type Handler struct {
	*System
	*AuthCore
	*Profile
	*Notifications
	*Social
	*TwoFactor
	*Passkeys
	*Organizations
	*APIKeys
	*Suppressions
	*AuditLogs
	*AgentTools
	*OAuth
	*Webhooks
	*WebhookDeliveries
	*Contacts
	*ContactImport
	*ContactExport
	*ContactVerification
	*ContactFeeds
	*Segments
	*Labels
	*Mailboxes
	*Campaigns
	*CampaignEstimates
	*CampaignChecks
	*CampaignTests
	*Tracking
	*Unsubscribe
	*Deliverability
	*UniboxActions
	*Unibox
	*AgentPolicies
	*Approvals
	*Runs
	*AppConnections
	*CampaignStepRuns
	*ProductEvents
	*AnalyticsCampaigns
	*AnalyticsOrg
	*AnalyticsAccounts
	*PostureReports
	notYet

	mcp    *MCP
	logger *slog.Logger
}

// notYet answers every operation whose area has not shipped with ogen's ErrNotImplemented, which the server
// turns into a 501 naming the operation. It sits one level deeper than the area structs, so a method an area
// implements always wins over it.
type notYet struct {
	api.UnimplementedHandler
}

var _ api.Handler = (*Handler)(nil)

// Deps is everything the operation groups need, built once by server.New.
type Deps struct {
	Logger        *slog.Logger
	System        *System
	AuthCore      *AuthCore
	Profile       *Profile
	Notifications *Notifications
	Social        *Social
	TwoFactor     *TwoFactor
	Passkeys      *Passkeys
	Organizations *Organizations
	APIKeys       *APIKeys
	Suppressions  *Suppressions
	AuditLogs     *AuditLogs
	AgentTools    *AgentTools
	OAuth         *OAuth
	// WebhookDeliveries serves the delivery lists, redelivery and throttle drops (and an OAuth app's deliveries).
	WebhookDeliveries *WebhookDeliveries
	// Webhooks serves the webhook endpoint operations; the OAuth consent flow challenges apps' managed
	// endpoints through it.
	Webhooks *Webhooks
	// Contacts serves create, search, bulk actions and one contact's read, update, delete and lookup.
	Contacts *Contacts
	// ContactImport serves import preview and commit.
	ContactImport *ContactImport
	// ContactExport streams exports.
	ContactExport *ContactExport
	// ContactVerification serves the verification overview and runs.
	ContactVerification *ContactVerification
	// ContactFeeds serves a contact's notes, activities, timeline, emails and deals.
	ContactFeeds *ContactFeeds
	// Segments serves saved audiences and their members.
	Segments *Segments
	// Labels serves the folder, tag and category registries.
	Labels *Labels
	// Mailboxes is the sender-mailbox group.
	Mailboxes *Mailboxes
	// Campaigns serves the campaign model: list, overview, create, read, update, delete, duplicate, start, stop.
	Campaigns *Campaigns
	// CampaignEstimates serves the pre-launch campaign estimate.
	CampaignEstimates *CampaignEstimates
	// CampaignChecks serves campaign validate and preflight.
	CampaignChecks *CampaignChecks
	// CampaignTests serves the template preview, the test email and test runs.
	CampaignTests *CampaignTests
	// Tracking serves the open pixel and the click redirect.
	Tracking *Tracking
	// Unsubscribe serves the unsubscribe link's page and its one-click and form POSTs.
	Unsubscribe *Unsubscribe
	// Deliverability takes the events providers and integrations report.
	Deliverability *Deliverability
	// MCP serves /v1/mcp beside the generated server (see MCP()); nil leaves the path to the generated stubs.
	MCP *MCP
	// UniboxActions serves the unified inbox's writes: read/unread, moves, snoozes, thread labels, replies,
	// composed messages and the scheduled sends.
	UniboxActions *UniboxActions
	// Unibox serves the unified inbox's reads: the thread list, counts, overview, conversations, one message
	// and a thread's categories.
	Unibox *Unibox
	// AgentPolicies serves the agent policies: list, create, replace, delete and the caller's effective one.
	AgentPolicies *AgentPolicies
	// Approvals serves the actions held for a person: the list and the decision.
	Approvals *Approvals
	// Runs serves agent runs: create, list, get with the event stream, cancel.
	Runs *Runs
	// AppConnections serves the customer apps app_action steps call: CRUD, rotate-secret and the test.
	AppConnections *AppConnections
	// CampaignStepRuns serves the retry of a blocked app_action step run.
	CampaignStepRuns *CampaignStepRuns
	// ProductEvents records product events (resuming the campaign steps waiting for them) and reads them back.
	ProductEvents *ProductEvents
	// AnalyticsCampaigns serves the campaign reports: one campaign, its days and hours, and the comparison.
	AnalyticsCampaigns *AnalyticsCampaigns
	// AnalyticsOrg serves the dashboard and the usage overview.
	AnalyticsOrg *AnalyticsOrg
	// AnalyticsAccounts serves the account analytics: every mailbox's status and one mailbox's.
	AnalyticsAccounts *AnalyticsAccounts
	// PostureReports serves the deliverability and warmup reports.
	PostureReports *PostureReports
}

// New assembles the API handler.
func New(d Deps) *Handler {
	h := &Handler{System: d.System, AuthCore: d.AuthCore, Profile: d.Profile, Notifications: d.Notifications, Social: d.Social, TwoFactor: d.TwoFactor, Passkeys: d.Passkeys, Organizations: d.Organizations, APIKeys: d.APIKeys, Suppressions: d.Suppressions, AuditLogs: d.AuditLogs, AgentTools: d.AgentTools, OAuth: d.OAuth, Webhooks: d.Webhooks, WebhookDeliveries: d.WebhookDeliveries,
		Contacts: d.Contacts, ContactImport: d.ContactImport, ContactExport: d.ContactExport, ContactVerification: d.ContactVerification,
		ContactFeeds: d.ContactFeeds, Segments: d.Segments, Labels: d.Labels, Mailboxes: d.Mailboxes, mcp: d.MCP, logger: d.Logger,
		Campaigns:         d.Campaigns,
		CampaignEstimates: d.CampaignEstimates,
		CampaignChecks:    d.CampaignChecks,
		CampaignTests:     d.CampaignTests,
		Tracking:          d.Tracking,
		Unsubscribe:       d.Unsubscribe,
		Deliverability:    d.Deliverability,
		UniboxActions:     d.UniboxActions,
		Unibox:            d.Unibox,
		AgentPolicies:     d.AgentPolicies,
		Approvals:         d.Approvals,
		Runs:              d.Runs,
		AppConnections:    d.AppConnections,
		CampaignStepRuns:  d.CampaignStepRuns,
		ProductEvents:     d.ProductEvents,
		AnalyticsOrg:      d.AnalyticsOrg,
		AnalyticsAccounts: d.AnalyticsAccounts,
		PostureReports:    d.PostureReports,
	}
	h.AnalyticsCampaigns = d.AnalyticsCampaigns
	if d.OAuth != nil {
		d.OAuth.webhooks = d.Webhooks
	}
	return h
}

// MCP returns the /v1/mcp endpoint, which the server mounts in front of the generated router (the contract's
// mcp_post_message and mcp_open_stream describe it, but a streaming JSON-RPC transport is not an ogen
// operation). Nil when the handler was built without one.
func (h *Handler) MCP() http.Handler {
	if h.mcp == nil {
		return nil
	}
	return h.mcp
}

// OAuthLayer wraps next in the OAuth endpoints' HTTP layer (the consent flow's sign-in page, the raw request
// facts fosite needs, the RFC shape of protocol answers; see OAuth.HTTP). Without OAuth it is next itself.
func (h *Handler) OAuthLayer(next http.Handler) http.Handler {
	if h.OAuth == nil {
		return next
	}
	return h.OAuth.HTTP(next)
}

// NewError turns a handler or security error into the envelope: *apierror.Error keeps its status and code,
// a failed security check is a 401 unless the authenticator said otherwise, a value Postgres refused to
// store is a 400 (db.ClassifyInput, the last wall behind the request checks), anything else is a logged 500.
func (h *Handler) NewError(ctx context.Context, err error) *api.ErrorStatusCode {
	var secErr *ogenerrors.SecurityError
	if errors.As(err, &secErr) {
		var e *apierror.Error
		if !errors.As(secErr.Err, &e) {
			// ogen's own "no credential sent" and friends.
			if errors.Is(secErr.Err, ogenerrors.ErrSecurityRequirementIsNotSatisfied) {
				e = apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
			} else {
				e = apierror.From(secErr.Err)
			}
		}
		err = e
	}
	e := apierror.From(db.ClassifyInput(err))
	apierror.Log(ctx, h.logger, e)
	apierror.NoteHeaders(ctx, e)
	env := apierror.EnvelopeFor(ctx, e)
	out := &api.ErrorStatusCode{StatusCode: e.Status, Response: api.Error{
		Error: env.Error, Message: env.Message, Code: env.Code, RequestID: reqctx.ID(ctx),
	}}
	if e.Fix != "" {
		out.Response.Fix = api.NewOptString(e.Fix)
	}
	return out
}
