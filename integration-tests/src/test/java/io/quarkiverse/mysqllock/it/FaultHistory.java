package io.quarkiverse.mysqllock.it;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What happened in a fault run: the critical sections the workers journaled (see {@code FaultWorker}), read
 * incrementally while the run goes on, and the writes the resource table accepted.
 */
final class FaultHistory {

    /** One critical section, as its holder journaled it. Times are wall-clock microseconds; 0 means "never". */
    static final class Section {
        final String id;
        final String worker;
        String name;
        long fence;
        /** When {@code acquire} returned: the holder knew it held the lock from then on. */
        long acquiredAt;
        /** When {@code acquire} was called: the server granted the lock between this and {@link #acquiredAt}. */
        long requestedAt;
        /** accepted, rejected, failed, skipped (invalid before the write), lost-before-write, no-fence (none issued). */
        String outcome;
        long writeDoneAt;
        /**
         * A time at which the holder's {@code isValid()} still said it held the lock (taken just before that check), or 0
         * if the check said it did not.
         */
        long validAt;
        /** When the holder stopped acting under the lock (before it called release). */
        long endAt;
        long lostAt;
        String lostReason;
        long releasedAt;
        /** Its process was SIGKILLed before the section ended; {@link #endAt} is then the time of death. */
        boolean died;
        /** The server time at which its write took effect, if the resource accepted it. */
        long acceptedAt;
        /** A scheduled job's run (a {@code T} line): the tick it ran (epoch milliseconds), 0 for any other section. */
        long tick;
        /** A job run's kind: scheduled, catch_up, queued or run_now; null for any other section. */
        String kind;

        Section(String id) {
            this.id = id;
            this.worker = id.substring(0, id.indexOf("-t"));
        }

        boolean told() {
            return lostAt > 0;
        }

        boolean activeThroughout(long from, long to) {
            return acquiredAt > 0 && acquiredAt < from && (endAt == 0 || endAt > to);
        }
    }

    /** A write the resource accepted, in the order the database applied them. */
    record Write(long id, String name, long fence, String section, long writtenAt) {
    }

    private final Path directory;
    private final Map<Path, Long> offsets = new HashMap<>();
    private final Map<Path, String> partial = new HashMap<>();
    private final Map<String, Section> sections = new LinkedHashMap<>();
    private final List<Write> writes = new ArrayList<>();
    private final Map<String, Long> values = new HashMap<>();

    FaultHistory(Path directory) {
        this.directory = directory;
    }

    /** Reads what the journals gained since the last call. */
    synchronized FaultHistory refresh() {
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".tsv")).sorted().toList()) {
                read(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    private void read(Path file) throws IOException {
        long offset = offsets.getOrDefault(file, 0L);
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length <= offset) {
                return;
            }
            byte[] bytes = new byte[(int) (length - offset)];
            in.seek(offset);
            in.readFully(bytes);
            offsets.put(file, length);
            String text = partial.getOrDefault(file, "") + new String(bytes, StandardCharsets.UTF_8);
            int end = text.lastIndexOf('\n');
            partial.put(file, text.substring(end + 1));
            if (end >= 0) {
                for (String line : text.substring(0, end).split("\n")) {
                    apply(line.split("\t"));
                }
            }
        }
    }

    private void apply(String[] f) {
        Section s = sections.computeIfAbsent(f[1], Section::new);
        switch (f[0]) {
            case "S" -> {
                s.name = f[2];
                s.fence = Long.parseLong(f[3]);
                s.acquiredAt = Long.parseLong(f[4]);
                s.requestedAt = Long.parseLong(f[5]);
            }
            case "E" -> {
                s.outcome = f[2];
                s.writeDoneAt = Long.parseLong(f[3]);
                s.endAt = Long.parseLong(f[4]);
                s.validAt = f.length > 5 ? Long.parseLong(f[5]) : 0;
            }
            case "L" -> {
                if (s.lostAt == 0) {
                    s.lostAt = Long.parseLong(f[2]);
                    s.lostReason = f[3];
                }
            }
            case "R" -> s.releasedAt = Long.parseLong(f[2]);
            case "T" -> {
                s.tick = Long.parseLong(f[2]);
                s.kind = f[3];
            }
            default -> throw new IllegalStateException("Unknown journal line: " + String.join("\t", f));
        }
    }

    /** Sections that have started (an {@code S} line). */
    synchronized List<Section> sections() {
        return sections.values().stream().filter(s -> s.acquiredAt > 0).toList();
    }

    /** The first acquisition of a name after a time, or 0 if none yet. */
    synchronized long firstAcquisitionAfter(String name, long time) {
        long first = 0;
        for (Section s : sections.values()) {
            if (name.equals(s.name) && s.acquiredAt > time && (first == 0 || s.acquiredAt < first)) {
                first = s.acquiredAt;
            }
        }
        return first;
    }

    /** Marks the unfinished sections of SIGKILLed workers as ended by their death. */
    synchronized void died(Map<String, Long> deaths) {
        for (Section s : sections.values()) {
            Long death = deaths.get(s.worker);
            if (death != null && s.endAt == 0) {
                s.died = true;
                s.endAt = death;
            }
        }
    }

    /** Reads the resource table and its accepted writes, and joins them to the sections. */
    void loadWrites(Connection connection) throws SQLException {
        List<Write> accepted = new ArrayList<>();
        Map<String, Long> resource = new HashMap<>();
        try (Statement statement = connection.createStatement()) {
            try (ResultSet rs = statement.executeQuery("SELECT id, name, fence, section, written_at FROM resource_write"
                    + " ORDER BY id")) {
                while (rs.next()) {
                    accepted.add(new Write(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getLong(5)));
                }
            }
            try (ResultSet rs = statement.executeQuery("SELECT name, value FROM resource")) {
                while (rs.next()) {
                    resource.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        load(accepted, resource);
    }

    /** The writes the resource accepted (in the order it applied them) and its values, joined to the sections. */
    synchronized void load(List<Write> accepted, Map<String, Long> resource) {
        for (Write write : accepted) {
            writes.add(write);
            Section s = sections.get(write.section());
            if (s != null) {
                s.acceptedAt = write.writtenAt();
            }
        }
        values.putAll(resource);
    }

    synchronized List<Write> writes() {
        return List.copyOf(writes);
    }

    synchronized Map<String, Long> values() {
        return Map.copyOf(values);
    }

    synchronized Collection<Section> all() {
        return List.copyOf(sections.values());
    }
}
