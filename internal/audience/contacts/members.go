package contacts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MembersSQL returns a query (and its arguments, mode first as SearchSQL's; $1 is org) selecting the id of
// every contact of org in at least one of segments, each contact once. It is the one membership compiler
// (static pins, dynamic filters with their exclude pins) for callers that act on a segment's members as a set,
// such as a campaign enrolling the members of its linked segments with INSERT ... SELECT; a caller appends
// its own arguments after these. Unknown segments match nothing.
func MembersSQL(ctx context.Context, q Querier, org uuid.UUID, segments []uuid.UUID) (string, []any, error) {
	b := &builder{args: []any{org}}
	cond, err := conditions(ctx, q, b, Filter{AnySegmentIDs: segments}, 0)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf(`SELECT c.id FROM contacts c WHERE c.organization_id = $1 AND %s`, cond), perCall(b.args), nil
}

// Members is which of some contacts belong to which segments at one moment (Memberships).
type Members struct {
	// Of maps a segment to those of the contacts that are its members (absent: none are).
	Of map[uuid.UUID][]uuid.UUID
	// ReadLeads reports that a dynamic segment among them selects by the contacts' campaign leads
	// (campaign_ids, lead_status, engagement, min_campaigns, max_campaigns), so adding a lead can change who
	// belongs.
	ReadLeads bool
}

// Memberships reads which of the contacts ids belong to each of segments now, with the membership MembersSQL
// compiles, in one pass over those contacts by key (a text or custom-field condition is checked on their rows,
// without the trigram lookup over the organization a search makes). Two readings around a write tell who the
// write brought into a segment. Unknown segments have no members.
func Memberships(ctx context.Context, q Querier, org uuid.UUID, segments, ids []uuid.UUID) (Members, error) {
	out := Members{Of: map[uuid.UUID][]uuid.UUID{}}
	if len(segments) == 0 || len(ids) == 0 {
		return out, nil
	}
	b := &builder{args: []any{org}, byKey: true}
	in := b.arg(ids)
	defs, err := loadSegments(ctx, q, b, segments)
	if err != nil {
		return out, err
	}
	conds := make([]string, len(segments))
	for i, s := range segments {
		if d := defs[s]; d.dynamic && d.filter.readsLeads() {
			out.ReadLeads = true
		}
		cond, err := segmentCondition(ctx, q, b, defs, s, 0)
		if err != nil {
			return out, err
		}
		conds[i] = "coalesce(" + cond + ", false)" // a filter over a missing custom field is NULL: not a member

	}
	// One row per contact with one flag per segment; OFFSET 0 keeps the conditions evaluated once per row.
	sql := fmt.Sprintf(`SELECT id, m FROM (SELECT c.id, ARRAY[%s]::boolean[] AS m FROM contacts c
WHERE c.organization_id = $1 AND c.id = ANY(%s::uuid[]) OFFSET 0) x WHERE true = ANY(m)`, strings.Join(conds, ", "), in)
	rows, err := q.Query(ctx, sql, perCall(b.args)...)
	if err != nil {
		return out, fmt.Errorf("segment memberships: %w", err)
	}
	var id uuid.UUID
	var m []bool
	_, err = pgx.ForEachRow(rows, []any{&id, &m}, func() error {
		for i, in := range m {
			if in {
				out.Of[segments[i]] = append(out.Of[segments[i]], id)
			}
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("segment memberships: %w", err)
	}
	return out, nil
}

// readsLeads reports whether f selects by the contacts' campaign leads.
func (f Filter) readsLeads() bool {
	return len(f.CampaignIDs) > 0 || f.MinCampaigns != nil || f.MaxCampaigns != nil
}
