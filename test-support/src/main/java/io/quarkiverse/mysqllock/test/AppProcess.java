package io.quarkiverse.mysqllock.test;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A Quarkus application started as a separate JVM process ({@code java -jar quarkus-run.jar}), its output prefixed with
 * its name and kept for assertions.
 */
public final class AppProcess implements AutoCloseable {

    private final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private AppProcess(String name, Process process, PrintStream echo, Predicate<String> echoed) {
        this.name = name;
        this.process = process;
        Thread pump = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                    if (echo != null && echoed.test(line)) {
                        echo.println("[" + name + "] " + line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "output-" + name);
        pump.setDaemon(true);
        pump.start();
    }

    /**
     * Starts {@code java [-Dkey=value...] -jar jar}, or a native executable ({@code app [-Dkey=value...]}) when the
     * path does not end with {@code .jar}.
     *
     * @param echo where to print the process's output as it comes, or null to keep it only
     */
    public static AppProcess start(String name, Path jar, Map<String, String> properties, PrintStream echo) {
        return start(name, jar, properties, echo, line -> true);
    }

    /** As {@link #start(String, Path, Map, PrintStream)}, echoing only the lines that match. */
    public static AppProcess start(String name, Path jar, Map<String, String> properties, PrintStream echo,
            Predicate<String> echoed) {
        // Test applications start fast and stay small: C1 only, a small heap.
        return start(name, jar, List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"), properties, echo, echoed);
    }

    /** As {@link #start(String, Path, Map, PrintStream, Predicate)}, with these JVM options (ignored when native). */
    public static AppProcess start(String name, Path jar, List<String> jvmOptions, Map<String, String> properties,
            PrintStream echo, Predicate<String> echoed) {
        List<String> command = new ArrayList<>();
        if (jar.toString().endsWith(".jar")) {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(jvmOptions);
            properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
            command.add("-jar");
            command.add(jar.toString());
        } else {
            // a native executable (mvn -Pnative): system properties follow the executable
            command.add(jar.toAbsolutePath().toString());
            properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        }
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .directory(new File(System.getProperty("java.io.tmpdir"))).start();
            return new AppProcess(name, process, echo, echoed);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start " + name + ": " + command, e);
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public List<String> lines() {
        return List.copyOf(lines);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits for an output line that matches, failing with the output so far after the deadline. */
    public String awaitLine(Predicate<String> match, Duration deadline) {
        long end = System.nanoTime() + deadline.toNanos();
        int seen = 0;
        while (System.nanoTime() < end) {
            List<String> now = lines();
            for (; seen < now.size(); seen++) {
                if (match.test(now.get(seen))) {
                    return now.get(seen);
                }
            }
            if (!process.isAlive() && seen == lines().size()) {
                break;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new IllegalStateException(name + ": no matching output line within " + deadline.toMillis() + " ms"
                + (process.isAlive() ? "" : " (process exited with " + process.exitValue() + ")") + ". Output:\n"
                + String.join("\n", lines()));
    }

    /** Waits for the process to exit on its own and returns its exit code. */
    public int awaitExit(Duration deadline) {
        try {
            if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " did not exit within " + deadline.toMillis() + " ms. Output:\n"
                        + String.join("\n", lines()));
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGSTOP: the process freezes, as in a long GC pause or a VM migration; its connections stay open. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT: a paused process goes on where it stopped. */
    public void resume() {
        signal("CONT");
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL: no shutdown hook runs, nothing is released by the process itself. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGTERM, then SIGKILL if it does not exit within 10 seconds. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }
}
