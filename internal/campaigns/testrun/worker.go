package testrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Args is the job that settles a run's previous step and starts step Position (the position past the last
// step completes the run).
type Args struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	RunID          uuid.UUID `json:"run_id"`
	Position       int       `json:"position"`
}

// Kind names the job.
func (Args) Kind() string { return "campaign_test_step" }

// InsertOpts allow a few attempts for database errors; the last one fails the run, so no run is left running
// with nothing to carry it on.
func (Args) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: maxAttempts} }

const (
	maxAttempts = 5
	// settleFor is how long a job polls for the previous step's message to leave before it snoozes; a message
	// normally leaves within a second, and the poll stays well inside the job's one-minute timeout.
	settleFor = 15 * time.Second
	// settlePoll is the pause between two looks at the message.
	settlePoll = 200 * time.Millisecond
	// settleSnooze is how long a job waits, without holding a worker, for a message that waits in the pipeline
	// (the mailbox's gap or cap, a retry).
	settleSnooze = 30 * time.Second
)

// Worker runs test-run steps.
type Worker struct {
	river.WorkerDefaults[Args]
	Runner *Runner
}

// Work settles the previous step, then starts this one (the run's jobs take turns on its row lock), then
// gives its message a moment to leave so the step shows its result.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	a := job.Args
	err := w.work(ctx, river.ClientFromContext[pgx.Tx](ctx), a)
	if err != nil && !isSnooze(err) && job.Attempt >= job.MaxAttempts {
		// The last attempt: end the run rather than leave it running with nothing to carry it on.
		if ferr := w.Runner.abandon(context.WithoutCancel(ctx), a); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	return err
}

func isSnooze(err error) bool {
	var snooze *river.JobSnoozeError
	return errors.As(err, &snooze)
}

func (w *Worker) work(ctx context.Context, jobs events.Inserter, a Args) error {
	if a.Position > 0 {
		settled, err := w.Runner.settleWithin(ctx, a.OrganizationID, a.RunID, a.Position-1, settleFor)
		if err != nil {
			return err
		}
		if !settled {
			return river.JobSnooze(settleSnooze)
		}
	}
	sent, err := w.Runner.advance(ctx, jobs, a)
	if err != nil || !sent {
		return err
	}
	_, err = w.Runner.settleWithin(ctx, a.OrganizationID, a.RunID, a.Position, settleFor)
	return err
}

// settleWithin settles step pos of a run, looking again until it settles or d has passed. It reports whether
// the step is settled (or no longer needs to be: the run ended).
func (r *Runner) settleWithin(ctx context.Context, org, id uuid.UUID, pos int, d time.Duration) (bool, error) {
	deadline := r.now().Add(d)
	for {
		settled, err := r.settle(ctx, org, id, pos)
		if err != nil || settled || !r.now().Before(deadline) {
			return settled, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

// settle ends step pos when it is running and its outcome is known: a wait step completes (its wait is over
// when the next job runs); an email step completes when its message was sent and fails the run when the
// pipeline failed it. It reports false while the message is still in the pipeline.
func (r *Runner) settle(ctx context.Context, org, id uuid.UUID, pos int) (bool, error) {
	settled := true
	err := db.WithOrgTx(ctx, r.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		settled = true
		run, err := lock(ctx, tx, org, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // the campaign, and its runs with it, was deleted
		}
		if err != nil {
			return err
		}
		if run.State != StateRunning || pos >= len(run.Progress) || run.Progress[pos].State != StepRunning {
			return nil
		}
		s, now := &run.Progress[pos], r.now()
		if !s.TaskID.Valid {
			s.finish(StepCompleted, "waited", s.Detail, now)
			_, err := save(ctx, tx, run)
			return err
		}
		task, err := queries.CampaignTestRunTask(ctx, tx, dbq.CampaignTestRunTaskParams{OrganizationID: org, ID: s.TaskID.UUID})
		if err != nil {
			return err
		}
		switch task.Status {
		case "queued", "sending":
			settled = false
			return nil
		case "sent":
			s.finish(StepCompleted, "sent", fmt.Sprintf("Sent to %s as %s.", run.ProspectEmail, s.MessageID), now)
		default:
			fail(&run, pos, Issue{Code: cmp.Or(task.ErrorCode, "send_failed"),
				Message: cmp.Or(task.ErrorMessage, "The send pipeline did not send the message ("+task.Status+")."),
				Fix:     "Check the mailbox and the prospect's address, then start another test run."}, now)
		}
		_, err = save(ctx, tx, run)
		return err
	})
	return settled, err
}

// advance starts step a.Position of a run in one transaction with all it causes (the message enqueued, the
// next job inserted), or completes the run past its last step. A step already started (a retried job) is left
// alone. It reports whether it enqueued a message.
func (r *Runner) advance(ctx context.Context, jobs events.Inserter, a Args) (bool, error) {
	sent := false
	err := db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		sent = false
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		now := r.now()
		pos := a.Position
		if run.State != StateRunning || pos > len(run.Progress) || pos < len(run.Progress) && run.Progress[pos].State != StepWaiting {
			return nil // a retried job: this step was started (or the run ended) by an earlier execution
		}
		if pos > 0 && run.Progress[pos-1].State != StepCompleted && run.Progress[pos-1].State != StepSkipped {
			return nil // a job ahead of its turn: the previous step's own job carries the run on
		}
		if pos == len(run.Progress) {
			run.State, run.CompletedAt = StateCompleted, &now
			_, err := save(ctx, tx, run)
			return err
		}
		c, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: a.OrganizationID, ID: run.CampaignID})
		if err != nil {
			return err
		}
		steps, err := campaign.Steps(ctx, tx, a.OrganizationID, run.CampaignID)
		if err != nil {
			return err
		}
		s := &run.Progress[pos]
		s.StartedAt = &now
		run.CurrentStepID = uuid.NullUUID{UUID: s.StepID, Valid: true}
		step := stepByID(steps, s.StepID)
		var wait time.Duration
		switch {
		case step == nil:
			s.finish(StepSkipped, "skipped", "The step was deleted from the campaign during the run.", now)
		case step.Kind == campaign.StepWait:
			wait = r.wait
			s.State, s.Detail = StepRunning, fmt.Sprintf("Waiting %s for the step's %s minutes.", r.wait, waitMinutes(*step))
		case kindOf(*step) == campaign.ActionForEvent:
			// No product event reaches a test run: the wait is compressed and the run goes on as if it came.
			wait = r.wait
			s.State, s.Detail = StepRunning, fmt.Sprintf("Waiting %s in place of the event the step waits for, then going on as if it came.", r.wait)
		case step.Kind != campaign.StepEmail:
			s.finish(StepSkipped, "skipped", "Test runs do not run "+kindOf(*step)+" steps yet.", now)
		default:
			issue, err := r.send(ctx, tx, jobs, &run, c, steps, *step, pos)
			if err != nil {
				return err
			}
			if issue != nil {
				fail(&run, pos, *issue, now)
				_, err := save(ctx, tx, run)
				return err
			}
			sent = true
		}
		if next := pos + 1; next < len(run.Progress) {
			if ns := stepByID(steps, run.Progress[next].StepID); ns != nil && ns.WaitAfter > 0 {
				wait += r.wait
			}
			run.Progress[next].Detail = due(now.Add(wait))
		}
		if err := insertStep(ctx, tx, jobs, a.OrganizationID, run.ID, pos+1, now.Add(wait), now); err != nil {
			return err
		}
		_, err = save(ctx, tx, run)
		return err
	})
	return sent, err
}

// send composes email step pos for the run's contact and hands it to the pipeline, recording the task on the
// step. A message that must not be sent (unresolved, incomplete, refused) comes back as the issue that fails
// the run; only database trouble is an error.
func (r *Runner) send(ctx context.Context, tx pgx.Tx, jobs events.Inserter, run *Run, c dbq.Campaign, steps []campaign.Step, step campaign.Step, pos int) (*Issue, error) {
	org := run.OrganizationID
	contact := compose.Contact{}
	contact.Email = run.ProspectEmail
	if run.ContactID.Valid {
		var err error
		if contact, err = compose.LoadContact(ctx, tx, org, run.ContactID.UUID); err != nil {
			return refused(err, "The contact was deleted; start another test run.")
		}
	}
	m, err := queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: run.MailboxID.UUID})
	if errors.Is(err, pgx.ErrNoRows) {
		return &Issue{Code: "mailbox_not_found", Message: "The run's mailbox was removed.", Fix: "Start another test run from another mailbox."}, nil
	}
	if err != nil {
		return nil, err
	}
	msg, err := compose.Compose(compose.Input{Campaign: &c, Steps: steps, Step: &step, Contact: contact, Sender: &m})
	if err == nil {
		err = msg.Sendable()
	}
	if err != nil {
		return refused(err, "Fix the step's content, then start another test run.")
	}
	files, err := compose.StepFiles(ctx, tx, org, c.ID, uuid.NullUUID{UUID: step.ID, Valid: true})
	if err != nil {
		return nil, err
	}
	out := sending.Message{Kind: sending.KindDirect, To: []string{run.ProspectEmail}, Subject: msg.Subject, Text: msg.Plain,
		HTML: msg.HTML, StepName: "Test run: " + cmp.Or(step.Name, fmt.Sprintf("step %d", pos+1)), Attachments: compose.IDs(files), Signed: msg.Signed}
	if msg.ThreadReply {
		for _, earlier := range run.Progress[:pos] {
			if earlier.MessageID != "" {
				out.References = append(out.References, earlier.MessageID)
			}
		}
		if n := len(out.References); n > 0 {
			out.InReplyTo = out.References[n-1]
		}
	}
	task, err := sending.Enqueue(ctx, tx, jobs, m, out)
	if err != nil {
		return refused(err, "Check the step and the mailbox, then start another test run.")
	}
	s := &run.Progress[pos]
	s.State, s.TaskID, s.MessageID = StepRunning, uuid.NullUUID{UUID: task.ID, Valid: true}, task.MessageID
	s.Detail = fmt.Sprintf("Handed to the send pipeline from %s to %s.", task.FromEmail, run.ProspectEmail)
	return nil, nil
}

// refused turns a refusal (an API error) into the issue that fails the run; anything else stays an error, so
// the job tries again.
func refused(err error, fix string) (*Issue, error) {
	var e *apierror.Error
	if !errors.As(err, &e) {
		return nil, err
	}
	issue := issueOf(e, fix)
	return &issue, nil
}

// abandon fails a run whose job ran out of attempts (the cause goes to the job's error log), naming the step
// it stopped at.
func (r *Runner) abandon(ctx context.Context, a Args) error {
	return db.WithOrgTx(ctx, r.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		run, err := lock(ctx, tx, a.OrganizationID, a.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil || run.State != StateRunning {
			return err
		}
		issue := Issue{Code: "test_run_error", Message: "The run stopped on an internal error.", Fix: "Start another test run."}
		fail(&run, a.Position, issue, r.now())
		_, err = save(ctx, tx, run)
		return err
	})
}

func stepByID(steps []campaign.Step, id uuid.UUID) *campaign.Step {
	for i := range steps {
		if steps[i].ID == id {
			return &steps[i]
		}
	}
	return nil
}

// waitMinutes is a wait step's configured minutes, as written.
func waitMinutes(s campaign.Step) string {
	var a struct {
		WaitMinutes int64 `json:"wait_minutes"`
	}
	if err := json.Unmarshal(s.Action, &a); err != nil {
		return "?"
	}
	return fmt.Sprint(a.WaitMinutes)
}
