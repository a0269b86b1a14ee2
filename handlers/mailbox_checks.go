package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/inbucket/html2text"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailoauth"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// maxAppealReason bounds an appeal's reason (the table's CHECK holds the same number).
const maxAppealReason = 2000

// MailboxesVerifyAddress checks one address before mail goes to it, with the built-in verifier the contact
// verification runs use (syntax, disposable and role lists, MX, and the SMTP probe when the deployment has it
// on). The address comes in the body or the email query parameter.
func (h *Mailboxes) MailboxesVerifyAddress(ctx context.Context, req api.OptMailboxVerifyRequest, params api.MailboxesVerifyAddressParams) (*api.MailboxVerifyResult, error) {
	if _, err := tenantCaller(ctx); err != nil {
		return nil, err
	}
	raw := strings.TrimSpace(req.Value.Email.Value)
	if q := strings.TrimSpace(params.Email.Value); raw == "" {
		raw = q
	} else if q != "" && !strings.EqualFold(q, raw) {
		return nil, apierror.BadRequest("conflicting_email", "Send the address once: in the body or in the email query parameter.")
	}
	if raw == "" {
		return nil, apierror.BadRequest("email_required", "Send the address to check as email (body or query).")
	}
	addr, ok := contacts.NormalizeEmail(raw)
	if !ok {
		return nil, apierror.BadRequest("invalid_email", fmt.Sprintf("%q is not an email address.", raw))
	}
	if h.opts.Verifier == nil {
		return nil, apierror.Unavailable("verifier_unavailable", "This deployment has no address verifier.")
	}
	res := h.opts.Verifier.NewBatch().Check(ctx, []string{addr})[0]
	return &api.MailboxVerifyResult{Email: addr, Status: api.MailboxVerifyResultStatus(res.Status), Reason: res.Reason,
		IsCatchAll: res.CatchAll, HasMx: res.HasMX, CheckedAt: h.now()}, nil
}

// MailboxesWarmupBanStatus answers whether the warmup network blocked the mailbox, its health, the block's
// reason and span, and whether an appeal may be filed or is pending.
func (h *Mailboxes) MailboxesWarmupBanStatus(ctx context.Context, params api.MailboxesWarmupBanStatusParams) (*api.MailboxWarmupBanStatus, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var m dbq.Mailbox
	var pending int64
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if m, err = h.load(ctx, tx, org, params.ID); err != nil {
			return err
		}
		pending, err = h.queries.MailboxAppealPending(ctx, tx, dbq.MailboxAppealPendingParams{OrganizationID: org, MailboxID: params.ID})
		return err
	})
	if err != nil {
		return nil, err
	}
	blocked := m.WarmupHealth == "blocked"
	out := &api.MailboxWarmupBanStatus{EmailAccountID: m.ID, Blocked: blocked,
		HealthState: api.MailboxWarmupBanStatusHealthState(m.WarmupHealth), CanAppeal: blocked && pending == 0, PendingAppeal: pending > 0}
	if m.WarmupBlockReason != "" {
		out.Reason = api.NewOptString(m.WarmupBlockReason)
	}
	if m.WarmupBlockedAt != nil {
		out.BlockedAt = api.NewOptDateTime(*m.WarmupBlockedAt)
	}
	if m.WarmupBlockedUntil != nil {
		out.BlockedUntil = api.NewOptDateTime(*m.WarmupBlockedUntil)
	}
	return out, nil
}

// MailboxesWarmupAppeal files an appeal against the mailbox's warmup block: only while it is blocked, and one
// pending appeal at a time.
func (h *Mailboxes) MailboxesWarmupAppeal(ctx context.Context, req api.OptMailboxWarmupAppealRequest, params api.MailboxesWarmupAppealParams) (*api.MailboxWarmupAppealResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	reason := strings.TrimSpace(req.Value.Reason.Value)
	if utf8.RuneCountInString(reason) > maxAppealReason {
		return nil, apierror.BadRequest("invalid_reason", fmt.Sprintf("reason must be at most %d characters.", maxAppealReason))
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var by uuid.NullUUID
	if p := auth.PrincipalFrom(ctx); p != nil && p.UserID != uuid.Nil {
		by = uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		m, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		if m.WarmupHealth != "blocked" {
			return apierror.Conflict("warmup_not_blocked", "The mailbox's warmup is not blocked; there is nothing to appeal.")
		}
		_, err = h.queries.MailboxAppealInsert(ctx, tx, dbq.MailboxAppealInsertParams{OrganizationID: org, ID: id, MailboxID: m.ID,
			Reason: reason, CreatedBy: by})
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.Conflict("appeal_pending", "An appeal for this mailbox is already pending.")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.warmup_appealed", EntityType: audit.EntityEmailAccount, EntityID: m.ID.String(),
			Metadata: map[string]any{"email": m.Email, "appeal_id": id, "reason": reason}})
	})
	if err != nil {
		return nil, err
	}
	return &api.MailboxWarmupAppealResult{AppealID: id}, nil
}

// MailboxesSyncState answers the mailbox's latest sync state (null before its first sync) beside the sync
// policy's limits.
func (h *Mailboxes) MailboxesSyncState(ctx context.Context, params api.MailboxesSyncStateParams) (*api.MailboxSync, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var st dbq.MailboxSync
	found := true
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.load(ctx, tx, org, params.ID); err != nil {
			return err
		}
		st, err = h.queries.SyncStateGet(ctx, tx, dbq.SyncStateGetParams{OrganizationID: org, MailboxID: params.ID})
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	p := mailsync.DefaultPolicy
	out := &api.MailboxSync{Policy: api.MailboxSyncPolicy{BackfillDays: p.BackfillDays, BackfillMessages: p.BackfillMessages,
		DailyMessages: p.DailyMessages, OrgDailyMessages: p.OrgDailyMessages}}
	if !found {
		out.State.SetToNull()
		return out, nil
	}
	state := api.MailboxSyncState{BackfillStatus: api.MailboxSyncStateBackfillStatus(st.BackfillStatus),
		BackfillSynced: int(st.BackfillSynced), Deferred: int(st.Deferred),
		ThrottleReason: api.NewOptMailboxSyncStateThrottleReason(api.MailboxSyncStateThrottleReason(st.ThrottleReason))}
	for _, t := range []struct {
		v   *time.Time
		dst *api.OptDateTime
	}{{st.BackfillSince, &state.BackfillSince}, {st.BackfillStartedAt, &state.BackfillStartedAt},
		{st.BackfillCompletedAt, &state.BackfillCompletedAt}, {st.ThrottledUntil, &state.ThrottledUntil}, {st.LastSyncedAt, &state.LastSyncedAt}} {
		if t.v != nil {
			*t.dst = api.NewOptDateTime(*t.v)
		}
	}
	out.State.SetTo(state)
	return out, nil
}

// identityJSON is one stored send-as identity (mailboxes.identities).
type identityJSON struct {
	Email     string `json:"email"`
	Name      string `json:"name"`
	IsPrimary bool   `json:"is_primary"`
	IsDefault bool   `json:"is_default"`
	Verified  bool   `json:"verified"`
}

// identityOf is a mailbox's stored sending identity: send-as aliases exist only for Google mailboxes.
func identityOf(m dbq.Mailbox) (*api.MailboxSendIdentity, error) {
	var stored []identityJSON
	if err := json.Unmarshal(m.Identities, &stored); err != nil {
		return nil, err
	}
	out := &api.MailboxSendIdentity{Supported: api.NewOptBool(m.Provider == "gmail"), Provider: api.NewOptString(m.Provider),
		MailboxEmail: api.NewOptString(m.Email), SendAsEmail: api.NewOptString(m.SendAsEmail),
		Identities: make([]api.MailboxSendAsIdentity, len(stored)), SyncedAt: optNilTime(m.IdentitySyncedAt),
		SignatureSource:     api.NewOptMailboxSendIdentitySignatureSource(api.MailboxSendIdentitySignatureSource(m.SignatureSource)),
		SignatureImportedAt: optNilTime(m.SignatureImportedAt)}
	for i, s := range stored {
		out.Identities[i] = api.MailboxSendAsIdentity{Email: api.NewOptString(s.Email), Name: api.NewOptString(s.Name),
			IsPrimary: api.NewOptBool(s.IsPrimary), IsDefault: api.NewOptBool(s.IsDefault), Verified: api.NewOptBool(s.Verified)}
	}
	return out, nil
}

// MailboxesSendIdentity answers the stored sending identity; the provider is not contacted.
func (h *Mailboxes) MailboxesSendIdentity(ctx context.Context, params api.MailboxesSendIdentityParams) (*api.MailboxSendIdentity, error) {
	_, m, err := h.get(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	return identityOf(m)
}

// MailboxesRefreshSendIdentity reads the send-as aliases (and, when asked, the signature of the address the
// mailbox sends as) from the provider with the mailbox's access token. Only Google exposes them. A send-as
// choice the provider no longer verifies is cleared; an oversized signature stores nothing.
func (h *Mailboxes) MailboxesRefreshSendIdentity(ctx context.Context, req api.OptMailboxSendIdentityRefreshRequest, params api.MailboxesRefreshSendIdentityParams) (*api.MailboxSendIdentity, error) {
	org, m, err := h.get(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	if m.Provider != mailoauth.Google {
		return nil, apierror.BadRequest("mailbox_send_as_unsupported",
			"Send-as addresses are read from Google mailboxes only; this mailbox sends as its own address.")
	}
	unavailable := func(why string) error {
		return apierror.Unavailable("mailbox_identity_unavailable", "The provider cannot be asked for this mailbox's identity now: "+why+".")
	}
	p, ok := h.opts.Credentials.Providers[m.Provider]
	if !ok || m.Status != "active" {
		return nil, unavailable("the mailbox has no live connection (status " + m.Status + ")")
	}
	token, err := h.opts.Credentials.AccessToken(ctx, h.outbox, m)
	if errors.Is(err, mailbox.ErrNeedsConsent) {
		return nil, unavailable("the provider revoked the grant; connect the mailbox again")
	}
	if err != nil {
		return nil, unavailable("no access token could be obtained")
	}
	ids, err := p.SendAs(ctx, token)
	if err != nil {
		return nil, unavailable("the provider did not answer")
	}
	stored := make([]identityJSON, len(ids))
	sendAs, sendAsVerified := m.SendAsEmail, false
	signature := ""
	for i, id := range ids {
		stored[i] = identityJSON{Email: id.Email, Name: id.Name, IsPrimary: id.Primary, IsDefault: id.Default, Verified: id.Verified}
		if id.Email == sendAs && id.Verified {
			sendAsVerified = true
		}
		// The signature of the address mail goes out as: the send-as choice, else the primary address.
		if id.Email == sendAs || sendAs == "" && id.Primary {
			signature = id.Signature
		}
	}
	if sendAs != "" && sendAs != m.Email && !sendAsVerified {
		sendAs = "" // the provider no longer verifies it
	}
	set := dbq.MailboxSetIdentityParams{OrganizationID: org, ID: m.ID, SendAsEmail: sendAs}
	if req.Set && req.Value.ImportSignature.Or(false) && strings.TrimSpace(signature) != "" {
		if utf8.RuneCountInString(signature) > maxMailboxSignature {
			return nil, apierror.BadRequest("mailbox_signature_too_large",
				fmt.Sprintf("The provider's signature has %d characters; a stored signature holds at most %d. Nothing was stored.",
					utf8.RuneCountInString(signature), maxMailboxSignature)).
				WithFix("Shorten the signature at the provider, or set signature_html with PATCH /emails/{id}.")
		}
		plain, err := html2text.FromString(signature)
		if err != nil {
			return nil, apierror.BadRequest("mailbox_signature_invalid", "The provider's signature is not readable HTML.")
		}
		set.ImportSignature, set.SignatureHtml, set.SignaturePlain = true, signature, truncate.Chars(plain, maxMailboxSignature)
	}
	if set.Identities, err = json.Marshal(stored); err != nil {
		return nil, err
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.MailboxSetIdentity(ctx, tx, set)
		return db.Classify(err, "Mailbox")
	})
	if err != nil {
		return nil, err
	}
	return identityOf(row)
}
