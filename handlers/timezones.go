package handlers

import (
	"context"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/timezone"
)

// AccountOrgTimezonesList answers the zones a schedule or mailbox may name, each with its offset now.
func (s *System) AccountOrgTimezonesList(_ context.Context) ([]api.TimezoneOption, error) {
	opts, err := timezone.Options(time.Now())
	if err != nil {
		return nil, err
	}
	out := make([]api.TimezoneOption, len(opts))
	for i, o := range opts {
		out[i] = api.TimezoneOption{Name: o.Name, DisplayName: o.DisplayName}
	}
	return out, nil
}
