package io.quarkiverse.mysqllock.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.LockEvent;

/**
 * Records the lock events of the application under test, for {@link LockAssert}. Registered by the extension only when
 * the application runs for tests.
 */
@Singleton
public class LockRecorder {

    private final List<Recording> recordings = new CopyOnWriteArrayList<>();

    void record(@Observes LockEvent event) {
        for (Recording recording : recordings) {
            recording.events.add(event);
        }
    }

    /** Starts recording the events from now until the recording is closed. */
    Recording start() {
        Recording recording = new Recording(this);
        recordings.add(recording);
        return recording;
    }

    /** The events of one span of a test. */
    static final class Recording implements AutoCloseable {

        private final LockRecorder recorder;
        final List<LockEvent> events = new CopyOnWriteArrayList<>();

        private Recording(LockRecorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void close() {
            recorder.recordings.remove(this);
        }
    }
}
