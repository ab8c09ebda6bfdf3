package io.quarkiverse.mysqllock.bench;

/** One lock implementation under measurement: a worker per thread, each cycling acquire + release of its lock. */
interface Subject extends AutoCloseable {

    String name();

    /** A worker for one thread; {@code lockName} is that thread's own lock (distinct names: uncontended). */
    Worker worker(String lockName) throws Exception;

    @Override
    default void close() throws Exception {
    }

    /** A subject with nothing to close: its name and how it makes a thread's worker. */
    static Subject of(String name, Workers workers) {
        return new Subject() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Worker worker(String lockName) throws Exception {
                return workers.worker(lockName);
            }
        };
    }

    @FunctionalInterface
    interface Workers {
        Worker worker(String lockName) throws Exception;
    }

    interface Worker extends AutoCloseable {

        /** Acquires the lock (failing if it is not granted at once) and releases it. */
        void cycle() throws Exception;

        @Override
        default void close() throws Exception {
        }
    }
}
