package accounts_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/accounts"
)

func TestHealthIsTheMostSevereIssueAndTheScoreStopsAtZero(t *testing.T) {
	now := time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)
	box := func(status string) dbq.Mailbox {
		return dbq.Mailbox{ID: uuid.New(), Status: status, WarmupHealth: "healthy", AuthState: "unknown"}
	}
	open := func(severity string) dbq.MailboxError {
		return dbq.MailboxError{Code: "EMAIL_X", Title: severity + " entry", Severity: severity}
	}

	h, err := accounts.HealthOf(accounts.Input{Mailbox: box("active"), OpenErrors: []dbq.MailboxError{open("info")}}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Health{Status: accounts.Healthy, Score: 100, Issues: []string{"info entry"}}, h, "info is listed, not counted")

	h, err = accounts.HealthOf(accounts.Input{Mailbox: box("inactive"), SyncError: "timeout"}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Warning, h.Status)
	require.Equal(t, 80, h.Score)

	h, err = accounts.HealthOf(accounts.Input{Mailbox: box("revoked"), OpenErrors: []dbq.MailboxError{open("critical"), open("error"), open("warning")}}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Error, h.Status, "an error outranks a warning")
	require.Equal(t, 0, h.Score, "130 points of penalties stop at 0")
	require.Len(t, h.Issues, 4)

	// Warmup's verdict counts only while warmup is enabled.
	m := box("active")
	m.WarmupHealth = "blocked"
	h, err = accounts.HealthOf(accounts.Input{Mailbox: m}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Healthy, h.Status)
	m.Warmup = &now
	h, err = accounts.HealthOf(accounts.Input{Mailbox: m}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Error, h.Status)
	m.WarmupHealth = "watch"
	h, err = accounts.HealthOf(accounts.Input{Mailbox: m}, time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, accounts.Warning, h.Status)
}

func TestHealthRefusesValuesItDoesNotKnow(t *testing.T) {
	now := time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)
	_, err := accounts.HealthOf(accounts.Input{Mailbox: dbq.Mailbox{Status: "paused"}}, time.Hour, now)
	require.ErrorContains(t, err, `"paused"`)
	_, err = accounts.HealthOf(accounts.Input{Mailbox: dbq.Mailbox{Status: "active"}, OpenErrors: []dbq.MailboxError{{Severity: "fatal"}}}, time.Hour, now)
	require.ErrorContains(t, err, `"fatal"`)
	_, err = accounts.HealthOf(accounts.Input{Mailbox: dbq.Mailbox{Status: "active", Warmup: &now, WarmupHealth: "sick"}}, time.Hour, now)
	require.ErrorContains(t, err, `"sick"`)
}
