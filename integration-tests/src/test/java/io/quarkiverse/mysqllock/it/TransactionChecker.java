package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Judges the transaction workload ({@code TransactionWorker}) by what the database committed. Each commit of a name's
 * section incremented the name's counter row, and recorded its holder's fencing token, the counter's sequence number
 * its holder read under the lock ({@code seen_seq}, a plain read right after the grant) and the one it wrote
 * ({@code seq}: the row lock its update takes orders the commits of a name, so {@code seq} is their commit order).
 * <ul>
 * <li>A <b>stale commit</b> landed after a later holder of the name was granted the lock: a commit with a greater token
 * read the counter before it ({@code seen_seq < seq}), so this one committed after that holder's grant.</li>
 * <li>A <b>lost update</b>: a commit that did not read the commit before it ({@code seen_seq != seq - 1}), so the value
 * it wrote back overwrote that one's.</li>
 * <li>A token committed twice on a name, and a counter whose sequence is not its number of commits, are violations
 * too: the records would not be the commits.</li>
 * </ul>
 * With fenced commits there must be none of any; without, the stale commits and lost updates are what the run shows.
 */
final class TransactionChecker {

    /** One commit's record. */
    record Commit(String name, String section, long token, long seenSeq, long seq) {
    }

    static final String STALE = "stale commits (landed after a later holder was granted the lock)";
    static final String LOST = "lost updates (a commit that did not read the one before it)";

    private final List<Commit> commits;
    /** Each name's counter sequence: its number of commits. */
    private final Map<String, Long> counters;
    final Map<String, Object> figures = new LinkedHashMap<>();
    final List<String> violations = new ArrayList<>();

    TransactionChecker(List<Commit> commits, Map<String, Long> counters) {
        this.commits = commits;
        this.counters = counters;
    }

    static TransactionChecker read(Connection connection) throws SQLException {
        List<Commit> commits = new ArrayList<>();
        try (PreparedStatement select = connection
                .prepareStatement("SELECT name, section, token, seen_seq, seq FROM tx_commit ORDER BY name, seq");
                ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                commits.add(new Commit(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
            }
        }
        Map<String, Long> counters = new TreeMap<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT name, seq FROM tx_counter");
                ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                counters.put(rs.getString(1), rs.getLong(2));
            }
        }
        return new TransactionChecker(commits, counters);
    }

    TransactionChecker check() {
        Map<String, List<Commit>> byName = new TreeMap<>();
        for (Commit commit : commits) {
            byName.computeIfAbsent(commit.name(), n -> new ArrayList<>()).add(commit);
        }
        long stale = 0;
        long lost = 0;
        List<String> examples = new ArrayList<>();
        for (Map.Entry<String, List<Commit>> entry : byName.entrySet()) {
            List<Commit> list = entry.getValue();
            stale += stale(list, examples);
            lost += list.stream().filter(c -> c.seenSeq() != c.seq() - 1).count();
            Set<Long> tokens = new HashSet<>();
            long twice = list.stream().filter(c -> !tokens.add(c.token())).count();
            if (twice > 0) {
                violations.add(twice + " commit(s) of " + entry.getKey() + " by a token that committed before");
            }
        }
        for (Map.Entry<String, Long> counter : counters.entrySet()) {
            long recorded = byName.getOrDefault(counter.getKey(), List.of()).size();
            if (recorded != counter.getValue()) {
                violations.add(counter.getKey() + "'s counter counts " + counter.getValue() + " commits, " + recorded
                        + " recorded");
            }
        }
        figures.put("transactions committed", (long) commits.size());
        figures.put(STALE, stale);
        figures.put(LOST, lost);
        if (!examples.isEmpty()) {
            figures.put("stale commits, first ones", examples);
        }
        if (stale > 0) {
            violations.add(stale + " " + STALE + ", e.g. " + examples);
        }
        if (lost > 0) {
            violations.add(lost + " " + LOST);
        }
        return this;
    }

    /**
     * The commits of one name that a commit with a greater token did not see: for each, the greatest token among the
     * commits that read the counter before it committed ({@code seen_seq < seq}).
     */
    private static long stale(List<Commit> list, List<String> examples) {
        List<Commit> byRead = new ArrayList<>(list);
        byRead.sort(Comparator.comparingLong(Commit::seenSeq));
        long[] reads = byRead.stream().mapToLong(Commit::seenSeq).toArray();
        long[] greatestToken = new long[byRead.size()];
        for (int i = 0; i < byRead.size(); i++) {
            greatestToken[i] = Math.max(i == 0 ? Long.MIN_VALUE : greatestToken[i - 1], byRead.get(i).token());
        }
        long stale = 0;
        for (Commit commit : list) {
            int before = firstAtLeast(reads, commit.seq()); // the commits that read a sequence below this one's
            if (before > 0 && greatestToken[before - 1] > commit.token()) {
                stale++;
                if (examples.size() < 5) {
                    examples.add(commit.section() + " (token " + commit.token() + ", seq " + commit.seq() + ")");
                }
            }
        }
        return stale;
    }

    private static int firstAtLeast(long[] sorted, long value) {
        int index = Arrays.binarySearch(sorted, value);
        if (index < 0) {
            return -index - 1;
        }
        while (index > 0 && sorted[index - 1] == value) {
            index--;
        }
        return index;
    }
}
