package io.quarkiverse.mysqllock.bench;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import io.quarkiverse.mysqllock.LeadershipGranted;

/** The failover benchmark's leader process: says on its output when it is granted the role, with its clock. */
@ApplicationScoped
public class LeaderProbe {

    static final String LINE = "BENCH-LEADER ";

    void granted(@Observes LeadershipGranted granted) {
        System.out.println(LINE + granted.role() + " term " + granted.term() + " at " + BenchMain.micros());
    }
}
