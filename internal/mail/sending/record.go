package sending

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// record writes the attempt's result in a transaction of its own (see recordTx) and answers the wait before a
// retry.
func (p *Pipeline) record(ctx context.Context, outbox *events.Outbox, c *claimed, res result) (time.Duration, error) {
	var wait time.Duration
	err := db.WithOrgTx(ctx, p.pool, c.task.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		wait, err = p.recordTx(ctx, tx, outbox, c, res)
		return err
	})
	return wait, err
}

// recordTx writes the attempt's result in tx (guarded by the attempt that claimed the task: a result that comes
// too late to matter changes nothing), gives the day's place back when nothing left, and raises the
// account-level condition. It answers the wait before a retry.
func (p *Pipeline) recordTx(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, c *claimed, res result) (time.Duration, error) {
	t, m := c.task, c.mailbox
	org := t.OrganizationID
	var wait time.Duration
	var n int64
	var err error
	credit := false
	result := Settled{Task: t, Code: res.code, Message: clip(res.message)}
	switch {
	case res.outcome == delivered:
		result = Settled{Task: t, Status: StatusSent}
		sentCopy := "" // owed ("pending") unless warmup or a server that files its own copies
		if t.Kind != KindWarmup && m.SentCopies != SentCopiesServer {
			sentCopy = "pending"
		}
		n, err = queries.SendTaskSent(ctx, tx, dbq.SendTaskSentParams{OrganizationID: org, ID: t.ID, Attempts: t.Attempts, SentCopy: sentCopy})
		if err == nil && n > 0 && sentCopy != "" {
			err = p.oweCopy(ctx, tx, outbox, t, m)
		}
	case res.outcome == ambiguous:
		// Recorded (and told to the hook) by ambiguous itself, which queues the Sent folder check.
		n, err = p.ambiguous(ctx, tx, outbox, t, res.code, clip(res.message))
	case res.outcome == transient && t.Attempts < MaxAttempts:
		wait = retryAfter(t.Attempts)
		credit = true
		n, err = queries.SendTaskRequeue(ctx, tx, dbq.SendTaskRequeueParams{OrganizationID: org, ID: t.ID, FromStatus: "sending",
			Attempts: t.Attempts, NotBefore: p.now().Add(wait), ErrorCode: res.code, ErrorMessage: clip(res.message)})
	default:
		result.Status = StatusFailed
		if res.outcome == transient && res.account == "" {
			res.account = mailbox.ConditionServerError // the fifth transient failure in a row
		}
		credit = true
		n, err = queries.SendTaskFailed(ctx, tx, dbq.SendTaskFailedParams{OrganizationID: org, ID: t.ID, FromStatus: "sending",
			Attempts: t.Attempts, ErrorCode: res.code, ErrorMessage: clip(res.message)})
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		// A later attempt already settled the task (as ambiguous): its result stands.
		p.logger.WarnContext(ctx, "send result came after the task was settled", slog.String("task_id", t.ID.String()))
		return 0, nil
	}
	if credit {
		if err := p.credit(ctx, tx, t); err != nil {
			return 0, err
		}
	}
	if result.Status != "" {
		if err := p.settled(ctx, tx, outbox, result); err != nil {
			return 0, err
		}
	}
	if res.account != "" {
		return wait, mailbox.Raise(ctx, tx, outbox, m, res.account, res.message)
	}
	return wait, nil
}
