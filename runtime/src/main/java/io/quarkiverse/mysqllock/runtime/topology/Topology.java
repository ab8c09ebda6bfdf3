package io.quarkiverse.mysqllock.runtime.topology;

import java.util.List;

/**
 * What is known of the database's topology.
 *
 * @param replicated whether replication is configured, by configuration, URL or what the server reports
 * @param reason why, in words for the start-up log, health and Dev UI
 * @param readOnly the server refuses writes ({@code @@read_only}): a replica, or a primary being failed over
 * @param galera a Galera cluster node ({@code @@wsrep_on}), where {@code GET_LOCK} is unsupported
 * @param multiPrimary a member of a MySQL Group Replication group in multi-primary mode
 *        ({@code @@group_replication_single_primary_mode} off, a group named): every member takes writes, and named
 *        locks are local to each, as on Galera
 * @param skipped the probes the server refused or does not support, with why
 * @param unseen what replication the probes could not rule out, or null: a MySQL server that writes a binary log may
 *        have replicas that a plain user cannot see
 */
public record Topology(boolean replicated, String reason, boolean readOnly, boolean galera, boolean multiPrimary,
        List<String> skipped, String unseen) {

    /** Whether named locks here would be local to one node of several that all take writes: Galera, multi-primary. */
    public boolean namedLocksLocal() {
        return galera || multiPrimary;
    }
}
