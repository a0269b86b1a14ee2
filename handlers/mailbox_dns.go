package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// trackingStateOf is a mailbox's stored tracking-domain state.
func (h *Mailboxes) trackingStateOf(m dbq.Mailbox) *api.MailboxTrackingDomainState {
	out := &api.MailboxTrackingDomainState{TrackingDomain: m.TrackingDomain, TrackingDomainVerified: m.TrackingDomainVerified,
		TrackingDomainVerifiedAt: optNilTime(m.TrackingDomainVerifiedAt), CnameTarget: h.opts.TrackingHost,
		Status: api.MailboxTrackingDomainStateStatus(m.TrackingStatus), Message: m.TrackingMessage,
		TrackingHostUnresolvable: api.NewOptBool(m.TrackingHostUnresolvable)}
	if m.TrackingObserved != "" {
		out.Observed = api.NewOptString(m.TrackingObserved)
	}
	switch {
	case m.TrackingDomain == "":
		out.Status, out.Message = api.MailboxTrackingDomainStateStatusUnset, "No tracking domain is set; opens and clicks use the shared tracking host."
	case h.opts.TrackingHost == "":
		out.Status, out.Message = api.MailboxTrackingDomainStateStatusNoTarget, "This deployment has no tracking host, so no custom tracking domain can verify."
	case m.TrackingCheckedAt == nil:
		out.Status, out.Message = api.MailboxTrackingDomainStateStatusPending, "The domain has not been resolved yet."
	}
	return out
}

// MailboxesGetTrackingDomain answers the stored tracking-domain state; no DNS lookup is made.
func (h *Mailboxes) MailboxesGetTrackingDomain(ctx context.Context, params api.MailboxesGetTrackingDomainParams) (*api.MailboxTrackingDomainState, error) {
	_, m, err := h.get(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	return h.trackingStateOf(m), nil
}

// MailboxesUpdateTrackingDomain saves a custom tracking domain (normalised; empty clears it), resolves it once
// and answers the state. A DNS miss is a state, not an error.
func (h *Mailboxes) MailboxesUpdateTrackingDomain(ctx context.Context, params api.MailboxesUpdateTrackingDomainParams) (*api.MailboxTrackingDomainState, error) {
	domain, reason := dnscheck.NormalizeTrackingDomain(params.Domain.Value)
	if reason != "" {
		return nil, apierror.BadRequest("invalid_tracking_domain", reason).
			WithFix("Send a subdomain you control, such as track.example.com, and point it (CNAME) at the deployment's tracking host.")
	}
	return h.resolveTracking(ctx, params.ID, &domain)
}

// MailboxesVerifyTrackingDomain re-resolves the saved tracking domain now and answers the state.
func (h *Mailboxes) MailboxesVerifyTrackingDomain(ctx context.Context, params api.MailboxesVerifyTrackingDomainParams) (*api.MailboxTrackingDomainState, error) {
	return h.resolveTracking(ctx, params.ID, nil)
}

// resolveTracking resolves domain (nil: the saved one) outside any transaction and stores the outcome, unless
// the saved domain changed meanwhile (then the newer one's state is answered).
func (h *Mailboxes) resolveTracking(ctx context.Context, id uuid.UUID, domain *string) (*api.MailboxTrackingDomainState, error) {
	org, before, err := h.get(ctx, id)
	if err != nil {
		return nil, err
	}
	target := before.TrackingDomain
	if domain != nil {
		target = *domain
	}
	res := dnscheck.CheckTracking(ctx, h.opts.Resolver, target, h.opts.TrackingHost)
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: id})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		if cur.TrackingDomain != before.TrackingDomain {
			row = cur
			return nil
		}
		if row, err = mailbox.StoreTracking(ctx, tx, cur, target, res); err != nil {
			return err
		}
		if domain == nil || target == before.TrackingDomain {
			return nil
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.tracking_domain_changed", EntityType: audit.EntityEmailAccount, EntityID: id.String(),
			Metadata: map[string]any{"email": cur.Email, "from": before.TrackingDomain, "to": target, "status": res.Status}})
	})
	if err != nil {
		return nil, err
	}
	return h.trackingStateOf(row), nil
}

// MailboxesAuthCheck looks up the SPF, DKIM and DMARC of the mailbox's domain now; the stored auth_state is
// left to the daily check.
func (h *Mailboxes) MailboxesAuthCheck(ctx context.Context, params api.MailboxesAuthCheckParams) (*api.MailboxAuthCheck, error) {
	_, m, err := h.get(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	res := dnscheck.CheckAuth(ctx, h.opts.Resolver, mailbox.Domain(m.Email))
	out := &api.MailboxAuthCheck{Domain: res.Domain, SpfFound: res.SPFFound, DkimFound: res.DKIMFound,
		DkimStatus: api.MailboxAuthCheckDkimStatusUndetermined, DmarcFound: res.DMARCFound, DmarcInherited: res.DMARCInherited,
		Reserved: res.Reserved, LookupError: res.LookupError, AllAligned: res.Aligned(), Summary: res.Summary()}
	if res.SPFFound {
		out.SpfRecord = api.NewOptString(res.SPFRecord)
	}
	if res.DKIMFound {
		out.DkimStatus, out.DkimSelectors = api.MailboxAuthCheckDkimStatusFound, res.DKIMSelectors
	}
	if res.DMARCFound {
		out.DmarcPolicy, out.DmarcDomain = api.NewOptString(res.DMARCPolicy), api.NewOptString(res.DMARCDomain)
	}
	return out, nil
}
