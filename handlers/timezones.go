package handlers

import (
	"context"
	"time"

	"github.com/outflowhq/outflow/gen/api"
)

// AccountOrgTimezonesList answers the zones a schedule or mailbox may name, each with its offset now.
func (s *System) AccountOrgTimezonesList(_ context.Context) ([]api.TimezoneOption, error) {
	opts := s.zones.Options(time.Now())
	out := make([]api.TimezoneOption, len(opts))
	for i, o := range opts {
		out[i] = api.TimezoneOption{Name: o.Name, DisplayName: o.DisplayName}
	}
	return out, nil
}
