package io.quarkiverse.mysqllock.it;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * A fault worker's journal of its critical sections, a local file written one event at a time, because the database
 * is one of the things under attack and a SIGKILL must not lose what was already recorded. The events (see
 * {@code FaultHistory} in the tests): {@code S} (acquired, with the fencing token and the times the acquisition
 * returned and was requested), {@code L} (told of a loss), {@code E} (the write's outcome as this holder saw it, before
 * release, and when it last found its handle valid), {@code R} (released). Times are wall-clock microseconds,
 * comparable across the processes of one host.
 */
@Singleton
public class FaultJournal {

    @ConfigProperty(name = "fault-worker.journal", defaultValue = "fault-journal.tsv")
    String journalPath;

    private FileOutputStream journal;

    /** Opens the journal, appending. */
    synchronized void open() {
        try {
            journal = new FileOutputStream(journalPath, true);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open the journal " + journalPath, e);
        }
    }

    /** Wall-clock microseconds: the journals' time, comparable across the processes of one host. */
    static long now() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    /** One event, one write: what reached the kernel survives a SIGKILL of this process. */
    void write(Object... fields) {
        StringBuilder line = new StringBuilder();
        for (Object field : fields) {
            line.append(line.length() == 0 ? "" : "\t").append(field);
        }
        byte[] bytes = line.append('\n').toString().getBytes(StandardCharsets.UTF_8);
        synchronized (this) {
            try {
                journal.write(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
