package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Caps of a bulk selection.
const (
	MaxSelectedIDs    = 1000
	MaxFilterSelected = 50000
	MaxExclude        = 50000
)

// Selection is the contacts a bulk action applies to: explicit ids, or every contact matching a filter minus
// an exclude list.
type Selection struct {
	// Contacts are the explicit ids (when not All).
	Contacts []uuid.UUID
	All      bool
	Filter   Filter
	Exclude  []uuid.UUID
}

// SelectionInput is a selection object as a caller received it, before any check (the API's
// ContactSelection and the selection part of a bulk update). Handlers translate the request into it.
type SelectionInput struct {
	// Contacts are explicit ids; All selects every contact matching Filters instead, minus Exclude.
	Contacts []uuid.UUID
	All      bool
	Filters  SearchInput
	Exclude  []uuid.UUID
}

// ParseSelection validates a selection object: `contacts` (1 to 1000 ids) or `all: true` with `filters` and an
// optional `exclude` (at most 50,000 ids, else too_many_contacts; ignored unless all).
func ParseSelection(in SelectionInput) (Selection, error) {
	if !in.All {
		if len(in.Contacts) == 0 {
			return Selection{}, apierror.BadRequest("invalid_selection", "Select contacts with `contacts` (1 to 1000 ids) or `all: true` with `filters`.")
		}
		if len(in.Contacts) > MaxSelectedIDs {
			return Selection{}, apierror.BadRequest("invalid_selection", fmt.Sprintf("Send at most %d contact ids; select more with `all: true` and `filters`.", MaxSelectedIDs))
		}
		return Selection{Contacts: in.Contacts}, nil
	}
	if len(in.Exclude) > MaxExclude {
		return Selection{}, apierror.BadRequest("too_many_contacts", fmt.Sprintf("exclude takes at most %d ids.", MaxExclude))
	}
	f, err := ParseSearch(in.Filters)
	if err != nil {
		return Selection{}, err
	}
	return Selection{All: true, Filter: f, Exclude: in.Exclude}, nil
}

// IDs resolves the selection to contact ids of the organization. Explicit ids that do not exist are dropped;
// a filter selection matching nothing is 400 empty_selection and one matching more than 50,000 contacts is
// 400 selection_too_large.
func (s Selection) IDs(ctx context.Context, q Querier, org uuid.UUID) ([]uuid.UUID, error) {
	if !s.All {
		ids, err := queries.ContactIDsExisting(ctx, q, dbq.ContactIDsExistingParams{OrganizationID: org, Ids: s.Contacts})
		if err != nil {
			return nil, fmt.Errorf("select contacts: %w", err)
		}
		return ids, nil
	}
	ids, err := MatchingIDs(ctx, q, org, s.Filter, s.Exclude, MaxFilterSelected+1)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, apierror.BadRequest("empty_selection", "The filters match no contacts.")
	}
	if len(ids) > MaxFilterSelected {
		return nil, apierror.BadRequest("selection_too_large", fmt.Sprintf("The filters match more than %d contacts; narrow them.", MaxFilterSelected))
	}
	return ids, nil
}
