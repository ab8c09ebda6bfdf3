package io.quarkiverse.mysqllock.jobs;

/** Why a scheduled job ran. */
public enum RunKind {
    /** For a tick its trigger fired. */
    SCHEDULED,
    /** For ticks missed while no instance ran them (all down, or the job paused), by its missed-ticks policy. */
    CATCH_UP,
    /** Asked for with run-now. */
    RUN_NOW,
    /** The run queued while the previous one lasted ("queue one"). */
    QUEUED
}
