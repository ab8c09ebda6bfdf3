package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LockManager;

/**
 * The fault suite's leader workload ({@code fault-worker.workload=leader}): this instance joins the election of each
 * hot name's role (the name is {@code <role>#leader}, the role's lock). Each term is a critical section, run by the
 * grant's observer on the election's thread: journaled when granted (the term is its fencing token), a leader's work
 * for a random while, a check that this instance still leads that term, the fenced write, then a step-down with a short
 * hand-over so that leadership moves on. A revocation for a loss is journaled as the section's loss.
 */
@Singleton
public class LeaderWorker {

    private static final Logger LOG = Logger.getLogger(LeaderWorker.class);
    static final String SUFFIX = "#leader";

    @Inject
    LockManager locks;
    @Inject
    FaultJournal journal;
    @Inject
    FencedResource resource;

    @ConfigProperty(name = "fault-worker.max-lead", defaultValue = "100ms")
    Duration maxLead;

    private final Map<String, LeaderElection> elections = new ConcurrentHashMap<>();
    /** By role: held while a term's section runs. */
    private final Map<String, Object> sections = new ConcurrentHashMap<>();
    /** By role: when this instance began to campaign for its next term (joined, or its last term ended). */
    private final Map<String, Long> campaigningSince = new ConcurrentHashMap<>();
    private volatile String worker;
    private volatile boolean stopping;

    /** Joins the election of each name's role ({@code <role>#leader}). */
    void start(String id, List<String> names) {
        worker = id;
        for (String name : names) {
            if (!name.endsWith(SUFFIX)) {
                throw new IllegalArgumentException("A leader workload's names are roles' locks, '<role>" + SUFFIX
                        + "': " + name);
            }
            String role = name.substring(0, name.length() - SUFFIX.length());
            campaigningSince.put(role, FaultJournal.now());
            sections.put(role, new Object());
            elections.put(role, locks.election(role));
        }
        elections.values().forEach(LeaderElection::join);
    }

    /**
     * Leaves every election once the term in progress, if any, was journaled to its end: no term is released while its
     * section still runs, and none starts after. Whether all were left.
     */
    boolean stop() {
        stopping = true;
        for (Object section : sections.values()) {
            synchronized (section) {
                // the section in progress, if any, has ended; those granted from now on do not start
            }
        }
        elections.values().forEach(LeaderElection::close);
        return elections.values().stream().noneMatch(LeaderElection::isLeader);
    }

    /** The roles this instance leads now. */
    List<String> leading() {
        return elections.entrySet().stream().filter(e -> e.getValue().isLeader()).map(Map.Entry::getKey).sorted()
                .toList();
    }

    void granted(@Observes LeadershipGranted granted) {
        LeaderElection election = elections.get(granted.role());
        if (election == null) {
            return;
        }
        synchronized (sections.get(granted.role())) {
            if (!stopping) {
                lead(election, granted);
            }
        }
    }

    /** One term's section; {@link #stop()} waits for it. */
    private void lead(LeaderElection election, LeadershipGranted granted) {
        String name = granted.role() + SUFFIX;
        String section = section(granted.role(), granted.term());
        long acquiredAt = FaultJournal.now();
        journal.write("S", section, name, granted.term(), acquiredAt, campaigningSince.get(granted.role()));
        try {
            long lead = ThreadLocalRandom.current().nextLong(maxLead.toMillis() + 1);
            if (lead > 0) {
                Thread.sleep(lead);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // taken before the check: if the check says it leads, it believed so at least until then
        long checkedAt = FaultJournal.now();
        boolean leads = election.term().equals(OptionalLong.of(granted.term()));
        String outcome = leads ? resource.write(section, name, granted.term()) : "skipped";
        long writeDone = FaultJournal.now();
        journal.write("E", section, outcome, writeDone, FaultJournal.now(), leads ? checkedAt : 0);
        election.stepDown(Duration.ofMillis(ThreadLocalRandom.current().nextLong(0, 30)));
        long end = FaultJournal.now();
        journal.write("R", section, end);
        campaigningSince.put(granted.role(), end);
    }

    void revoked(@Observes LeadershipRevoked revoked) {
        if (elections.containsKey(revoked.role()) && revoked.reason() == LeadershipRevoked.Reason.LOST) {
            journal.write("L", section(revoked.role(), revoked.term()), FaultJournal.now(), revoked.loss().reason());
            LOG.debugf("%s lost the lead of %s (term %d)", worker, revoked.role(), revoked.term());
        }
    }

    /** A section's id: the worker's, then the role's term ({@code FaultHistory} reads the worker before "-t"). */
    private String section(String role, long term) {
        return worker + "-t" + role + "." + term;
    }
}
