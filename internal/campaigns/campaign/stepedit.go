package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// The sequence editor: steps added, changed, moved and removed one at a time. Each edit locks the campaign row,
// so edits of one campaign apply one after the other; it builds the new order in Go and writes only the
// positions that changed, which keeps them dense from 0. An edit re-evaluates nothing but the step it names:
// the other steps keep their stored wait_after and thread_reply wherever they end up.

// stepNotFound is the answer for a step id that is not one of the campaign's steps.
func stepNotFound() error {
	return apierror.NotFound("step_not_found", "Step not found in this campaign.")
}

// SequenceOf reads the steps of one campaign of org in order (404 for an unknown campaign).
func SequenceOf(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) ([]Step, error) {
	if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id}); err != nil {
		return nil, classify(err)
	}
	return Steps(ctx, tx, org, id)
}

// AddStep inserts a step at in.Position (the end when unset) with the defaults of BuildStep for that place,
// moving the steps from there on down one. A campaign holds at most MaxSteps steps and a one_time campaign at
// most one email step.
func (s *Store) AddStep(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, in StepInput) (Step, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Step{}, err
	}
	steps, err := Steps(ctx, tx, org, id)
	if err != nil {
		return Step{}, err
	}
	if len(steps) >= MaxSteps {
		return Step{}, apierror.BadRequest("too_many_steps",
			fmt.Sprintf("A campaign holds at most %d steps; delete one before adding another.", MaxSteps))
	}
	pos, err := stepPlace(in.Position, len(steps))
	if err != nil {
		return Step{}, err
	}
	st, err := BuildStep(Step{}, in, pos, steps)
	if err != nil {
		return Step{}, err
	}
	if st.ID, err = uuid.NewV7(); err != nil {
		return Step{}, err
	}
	order := slices.Insert(slices.Clone(steps), pos, st)
	if err := CheckKind(row.Kind, order); err != nil {
		return Step{}, err
	}
	if err := insertSteps(ctx, tx, org, id, []Step{st}); err != nil {
		return Step{}, err
	}
	return s.resequenced(ctx, tx, row, steps, order, st.ID, "step_created")
}

// UpdateStep changes the fields in sends of one step and, with in.Position, moves it there (the steps in
// between close up). Changing the subject re-applies the thread_reply default unless thread_reply is sent,
// and turning a step into an email step drops its action config unless one is sent (which is refused).
func (s *Store) UpdateStep(ctx context.Context, tx pgx.Tx, org, id, stepID uuid.UUID, in StepInput) (Step, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Step{}, err
	}
	steps, err := Steps(ctx, tx, org, id)
	if err != nil {
		return Step{}, err
	}
	at := slices.IndexFunc(steps, func(x Step) bool { return x.ID == stepID })
	if at < 0 {
		return Step{}, stepNotFound()
	}
	others := slices.Delete(slices.Clone(steps), at, at+1)
	pos := at
	if in.Position.Set {
		if pos, err = stepPlace(in.Position, len(others)); err != nil {
			return Step{}, err
		}
	}
	if in.Kind.Set && in.Kind.Value == StepEmail && !in.Action.Set {
		in.Action = Of[json.RawMessage](nil)
	}
	st, err := BuildStep(steps[at], in, pos, others)
	if err != nil {
		return Step{}, err
	}
	order := slices.Insert(others, pos, st)
	if err := CheckKind(row.Kind, order); err != nil {
		return Step{}, err
	}
	if err := keepConnections(ctx, tx, org, []Step{st}); err != nil {
		return Step{}, err
	}
	if err := queries.CampaignStepUpdate(ctx, tx, dbq.CampaignStepUpdateParams{
		OrganizationID: org, CampaignID: id, ID: st.ID, Position: st.Position, Name: st.Name, Kind: st.Kind,
		Subject: st.Subject, BodyPlain: st.BodyPlain, BodyHtml: st.BodyHTML, BodySync: st.BodySync, BodyCode: st.BodyCode,
		WaitAfter: st.WaitAfter, ThreadReply: st.ThreadReply, Conditions: st.Conditions, Action: st.Action,
		OnTimeout: st.OnTimeout,
	}); err != nil {
		return Step{}, classify(err)
	}
	return s.resequenced(ctx, tx, row, steps, order, st.ID, "step_updated")
}

// DeleteStep removes one step with its step-scoped variants and attachments; the steps after it move up one.
func (s *Store) DeleteStep(ctx context.Context, tx pgx.Tx, org, id, stepID uuid.UUID) error {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return err
	}
	steps, err := Steps(ctx, tx, org, id)
	if err != nil {
		return err
	}
	at := slices.IndexFunc(steps, func(x Step) bool { return x.ID == stepID })
	if at < 0 {
		return stepNotFound()
	}
	if err := queries.CampaignStepDelete(ctx, tx, dbq.CampaignStepDeleteParams{OrganizationID: org, CampaignID: id, ID: stepID}); err != nil {
		return err
	}
	_, err = s.resequenced(ctx, tx, row, steps, slices.Delete(slices.Clone(steps), at, at+1), stepID, "step_deleted")
	return err
}

// stepPlace reads a requested position among n places (0 to n).
func stepPlace(p Field[int32], n int) (int, error) {
	if !p.Set {
		return n, nil
	}
	if p.Value < 0 || int(p.Value) > n {
		return 0, invalid("position", fmt.Sprintf("must be 0 to %d (0 is the first place, %d the last).", n, n))
	}
	return int(p.Value), nil
}

// resequenced writes the positions of order (the sequence after an edit of before), carries the campaign's
// leads along, records the change and answers the step stepID as stored (the zero Step when it was deleted).
func (s *Store) resequenced(ctx context.Context, tx pgx.Tx, c dbq.Campaign, before, order []Step, stepID uuid.UUID, change string) (Step, error) {
	ids := make([]uuid.UUID, len(order))
	for i, st := range order {
		ids[i] = st.ID
	}
	if err := queries.CampaignStepsReposition(ctx, tx, dbq.CampaignStepsRepositionParams{OrganizationID: c.OrganizationID,
		CampaignID: c.ID, Ids: ids}); err != nil {
		return Step{}, err
	}
	if from, to := leadMoves(before, order); len(from) > 0 {
		if err := queries.CampaignLeadsRemapSteps(ctx, tx, dbq.CampaignLeadsRemapStepsParams{OrganizationID: c.OrganizationID,
			CampaignID: c.ID, FromPositions: from, ToPositions: to}); err != nil {
			return Step{}, err
		}
	}
	if err := s.changed(ctx, tx, c, map[string]any{"fields": []string{"steps"}, "change": change, "step_id": stepID}); err != nil {
		return Step{}, err
	}
	stored, err := Steps(ctx, tx, c.OrganizationID, c.ID)
	if err != nil {
		return Step{}, err
	}
	if at := slices.IndexFunc(stored, func(x Step) bool { return x.ID == stepID }); at >= 0 {
		return stored[at], nil
	}
	return Step{}, nil
}

// leadMoves maps the lead positions of the sequence before an edit to the sequence after it, so that each lead
// carries on after the step it was last sent: a lead at position k (k steps behind it, the last before[k-1])
// goes to one past where that step now stands; when the step was deleted the one before it counts, and a lead
// at 0 stays at 0. It answers only the positions that change.
func leadMoves(before, after []Step) (from, to []int32) {
	at := make(map[uuid.UUID]int, len(after))
	for i, st := range after {
		at[st.ID] = i
	}
	for k := 1; k <= len(before); k++ {
		next := 0
		for j := k - 1; j >= 0; j-- {
			if i, ok := at[before[j].ID]; ok {
				next = i + 1
				break
			}
		}
		if next != k {
			from, to = append(from, int32(k)), append(to, int32(next))
		}
	}
	return from, to
}

// changed records an edit of one of a campaign's parts (steps, variants, senders, attachments): the campaign's
// updated_at moves, and campaign.updated is raised with its audit entry.
func (s *Store) changed(ctx context.Context, tx pgx.Tx, c dbq.Campaign, meta map[string]any) error {
	if err := queries.CampaignTouch(ctx, tx, dbq.CampaignTouchParams{OrganizationID: c.OrganizationID, ID: c.ID}); err != nil {
		return err
	}
	return s.raise(ctx, tx, Campaign{Campaign: c}, events.CampaignUpdated, audit.ActionUpdate, meta)
}
