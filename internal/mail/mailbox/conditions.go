package mailbox

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Account-level conditions a mailbox's error log records (part 1's worker results): raised by the send
// pipeline and the sync in addition to whatever they were doing.
const (
	ConditionAuthError   = "EMAIL_AUTH_ERROR"
	ConditionDisabled    = "EMAIL_DISABLED"
	ConditionRateLimited = "EMAIL_RATE_LIMITED"
	ConditionServerError = "EMAIL_SERVER_ERROR"
	// ConditionSendUndecided: a send may or may not have left and its Sent folder cannot tell; a person
	// decides (GET /emails/{id}/unsettled-sends). Resolved when none is left undecided.
	ConditionSendUndecided = "EMAIL_SEND_UNDECIDED"
)

var conditionTitles = map[string]string{
	ConditionAuthError:     "The mail server refused the mailbox's login",
	ConditionDisabled:      "The mail server refuses to send for this mailbox",
	ConditionRateLimited:   "The mail server is limiting this mailbox's sending",
	ConditionServerError:   "The mail server could not be reached",
	ConditionSendUndecided: "A send may or may not have gone out; decide whether to send it again",
}

// Raise records a condition in m's error log and emits email_account.error, unless the same condition is
// already open (unresolved): a failing login retried every minute is one entry, not hundreds.
func Raise(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m dbq.Mailbox, code, message string) error {
	open, err := queries.MailboxErrorOpen(ctx, tx, dbq.MailboxErrorOpenParams{OrganizationID: m.OrganizationID, MailboxID: m.ID, Code: code})
	if err != nil || open > 0 {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	severity, action := "warning", false
	if code == ConditionAuthError || code == ConditionDisabled || code == ConditionSendUndecided {
		severity, action = "error", true
	}
	e, err := queries.MailboxErrorInsert(ctx, tx, dbq.MailboxErrorInsertParams{OrganizationID: m.OrganizationID, ID: id, MailboxID: m.ID,
		Code: code, Severity: severity, Title: conditionTitles[code], Message: truncate.Chars(message, 2000), ActionRequired: action})
	if err != nil {
		return err
	}
	_, err = outbox.Emit(ctx, tx, events.MailboxError, map[string]any{
		"email_account_id": m.ID, "email": m.Email, "code": e.Code, "severity": e.Severity, "message": e.Message,
		"action_required": e.ActionRequired,
	})
	return err
}

// Resolve closes m's open entries of a condition that has gone away (a login that works again).
func Resolve(ctx context.Context, tx pgx.Tx, m dbq.Mailbox, code string) error {
	return queries.MailboxErrorResolve(ctx, tx, dbq.MailboxErrorResolveParams{OrganizationID: m.OrganizationID, MailboxID: m.ID, Code: code})
}
