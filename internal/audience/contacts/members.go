package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
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
