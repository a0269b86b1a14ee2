package timezone

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zones resolve without the host's zoneinfo
)

// zoneList is zones.txt: UTC, then one zone per country region of the tz database's zone.tab.
//
//go:embed zones.txt
var zoneList string

// Option is one zone a person can pick: Name is what the API stores and accepts, DisplayName what a picker
// shows.
type Option struct {
	// Name is the IANA zone name, for example "America/New_York".
	Name string
	// DisplayName is the zone's UTC offset at the time asked for and its name in words, for example
	// "(UTC-05:00) America/New York".
	DisplayName string
}

// Options returns every offered zone, UTC first, then by name, each shown with its offset at now (offsets
// move with daylight saving time, so a picker shows the one in force). A name the tz database does not
// resolve is an error: the list and the database ship together, and a test proves they agree.
func Options(now time.Time) ([]Option, error) {
	locs, err := locations()
	if err != nil {
		return nil, err
	}
	out := make([]Option, len(locs))
	for i, loc := range locs {
		out[i] = Option{Name: loc.String(), DisplayName: displayName(loc.String(), now.In(loc))}
	}
	return out, nil
}

// locations resolves zones.txt once per process: loading the ~400 zones takes about 17 ms, the offsets
// afterwards well under one. The result never changes (the list and the database are compiled in).
var locations = sync.OnceValues(func() ([]*time.Location, error) {
	var out []*time.Location
	for _, line := range strings.Split(zoneList, "\n") {
		name := strings.TrimSpace(line)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			return nil, fmt.Errorf("time zone %s: %w", name, err)
		}
		out = append(out, loc)
	}
	return out, nil
})

// displayName is "(UTC+05:30) Asia/Kolkata" with underscores read as spaces; UTC is just "UTC".
func displayName(name string, at time.Time) string {
	if name == "UTC" {
		return name
	}
	_, offset := at.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("(UTC%c%02d:%02d) %s", sign, offset/3600, offset%3600/60, strings.ReplaceAll(name, "_", " "))
}
