package actions

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// MaxSnoozeAhead is how far ahead a thread may be snoozed: a year, past which a snooze is a way of forgetting.
const MaxSnoozeAhead = 365 * 24 * time.Hour

// ErrUserRequired answers a caller with no person behind it (an API key created without a user): snoozes
// belong to a user, and there is none to hold them.
var ErrUserRequired = apierror.BadRequest("user_required",
	"Snoozes belong to a person, and this credential has none: it is an API key that was not created by a user.").
	WithFix("Use a signed-in session, an OAuth token, or an API key created by a user.")

// Snooze hides thread from user's inbox list until until (in the future, at most MaxSnoozeAhead ahead):
// one snooze per user and thread, so snoozing again moves its time.
func Snooze(ctx context.Context, tx pgx.Tx, s Scope, user uuid.UUID, threadID string, until, now time.Time) (dbq.InboxSnooze, error) {
	if user == uuid.Nil {
		return dbq.InboxSnooze{}, ErrUserRequired
	}
	if !until.After(now) || until.After(now.Add(MaxSnoozeAhead)) {
		return dbq.InboxSnooze{}, apierror.BadRequest("invalid_snoozed_until",
			"snoozed_until must be in the future and at most a year ahead (RFC 3339, such as 2026-03-01T09:00:00Z).")
	}
	t, err := thread(ctx, tx, s, threadID)
	if err != nil {
		return dbq.InboxSnooze{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.InboxSnooze{}, err
	}
	return queries.InboxActionSnoozeUpsert(ctx, tx, dbq.InboxActionSnoozeUpsertParams{OrganizationID: s.Org, ID: id, UserID: user,
		ThreadID: t.ID, SnoozedUntil: until})
}

// Unsnooze removes user's snooze of thread, if there is one: unsnoozing twice, or a thread never snoozed, is
// not an error. An empty thread id is; one that is not an id names nothing to unsnooze.
func Unsnooze(ctx context.Context, tx pgx.Tx, s Scope, user uuid.UUID, threadID string) error {
	if user == uuid.Nil {
		return ErrUserRequired
	}
	if threadID == "" {
		return errThreadRequired
	}
	id, err := uuid.Parse(threadID)
	if err != nil {
		return nil
	}
	return queries.InboxActionSnoozeDelete(ctx, tx, dbq.InboxActionSnoozeDeleteParams{OrganizationID: s.Org, UserID: user, ThreadID: id})
}

// Snoozes lists user's snoozes that still hide their thread at now, soonest first; one that came due is
// gone from the list, as its thread is back in the inbox.
func Snoozes(ctx context.Context, tx pgx.Tx, s Scope, user uuid.UUID, now time.Time) ([]dbq.InboxSnooze, error) {
	if user == uuid.Nil {
		return nil, ErrUserRequired
	}
	return queries.InboxActionSnoozes(ctx, tx, dbq.InboxActionSnoozesParams{OrganizationID: s.Org, UserID: user, Now: now,
		MailboxIds: s.mailboxFilter()})
}
