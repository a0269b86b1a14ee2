package accounts

import (
	"fmt"
	"time"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
)

// The health levels, least severe first: a mailbox's health is its most severe issue's, and the dashboard's
// buckets are these three.
const (
	Healthy = "healthy"
	Warning = "warning"
	Error   = "error"
)

// Points a score loses per issue of each level (doc.go states the rule).
const (
	errorPenalty   = 40
	warningPenalty = 10
)

// Health is a mailbox's health: its most severe level, the score and the issues behind them, in the order
// the rules run.
type Health struct {
	Status string
	Score  int
	Issues []string
}

// Input is what the health rules read of one mailbox.
type Input struct {
	Mailbox dbq.Mailbox
	// SyncError is the mailbox sync's last error ("" when the last sync worked or none ran).
	SyncError string
	// OpenErrors are the unresolved entries of the mailbox's error log.
	OpenErrors []dbq.MailboxError
}

// HealthOf applies the rules of doc.go to in at now; grace is how long a domain may fail authentication
// before its mailboxes stop sending. A value the rules do not know is an error.
func HealthOf(in Input, grace time.Duration, now time.Time) (Health, error) {
	m := in.Mailbox
	h := Health{Status: Healthy, Score: 100, Issues: []string{}}
	add := func(level, issue string) {
		h.Issues = append(h.Issues, issue)
		switch level {
		case Error:
			h.Status, h.Score = Error, h.Score-errorPenalty
		case Warning:
			if h.Status == Healthy {
				h.Status = Warning
			}
			h.Score -= warningPenalty
		}
	}
	switch m.Status {
	case "active":
	case "inactive":
		add(Warning, "The mailbox is inactive: nothing is sent from it.")
	case "revoked":
		add(Error, "The mailbox's access was revoked: reconnect it.")
	default:
		return Health{}, fmt.Errorf("accounts: mailbox %s has status %q, which the health rules do not know", m.ID, m.Status)
	}
	for _, e := range in.OpenErrors {
		issue := e.Title
		if issue == "" {
			issue = e.Code
		}
		switch e.Severity {
		case "error", "critical":
			add(Error, issue)
		case "warning":
			add(Warning, issue)
		case "info":
			add("", issue)
		default:
			return Health{}, fmt.Errorf("accounts: error log entry %s has severity %q, which the health rules do not know", e.ID, e.Severity)
		}
	}
	if m.AuthState == "failing" {
		since := "recently"
		if m.AuthFailingSince != nil {
			since = "since " + m.AuthFailingSince.UTC().Format(time.RFC3339)
		}
		if mailbox.AuthBlocked(m, grace, now) {
			add(Error, "The domain has failed authentication (SPF, DKIM, DMARC) "+since+", past the grace period: cold mail and warmup are stopped.")
		} else {
			add(Warning, "The domain fails authentication (SPF, DKIM, DMARC) "+since+"; sending stops when the grace period ends.")
		}
	}
	if in.SyncError != "" {
		add(Warning, "The last mailbox sync failed: "+in.SyncError)
	}
	if m.Warmup != nil {
		switch m.WarmupHealth {
		case "healthy":
		case "watch", "throttled":
			add(Warning, "Warmup rates the mailbox "+m.WarmupHealth+".")
		case "quarantined", "blocked":
			add(Error, "Warmup rates the mailbox "+m.WarmupHealth+".")
		default:
			return Health{}, fmt.Errorf("accounts: mailbox %s has warmup health %q, which the health rules do not know", m.ID, m.WarmupHealth)
		}
	}
	h.Score = max(h.Score, 0)
	return h, nil
}
