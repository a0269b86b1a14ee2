package heartbeat

import "time"

// Scheduler names the heartbeat that proves periodic jobs are scheduled and worked (a row of
// system_heartbeats).
const Scheduler = "scheduler"

// Interval is how often the scheduler's heartbeat job runs; readiness expects a beat within three.
const Interval = 15 * time.Second
