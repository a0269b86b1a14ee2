// Package heartbeat names the liveness beats that background work records and readiness reads. The jobs
// layer writes the scheduler's beat and the system handlers judge its age; both take the name and the rhythm
// from here, so neither has to import the other.
package heartbeat
