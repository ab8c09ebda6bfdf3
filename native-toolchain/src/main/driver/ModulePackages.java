/** Prints --add-exports=<module>/<package>=<targets> for every package of the named JDK modules that exist. */
public class ModulePackages {
    public static void main(String[] args) {
        for (int i = 1; i < args.length; i++) {
            ModuleLayer.boot().findModule(args[i]).ifPresent(module -> module.getPackages().stream().sorted()
                    .forEach(p -> System.out.println("--add-exports=" + module.getName() + "/" + p + "=" + args[0])));
        }
    }
}
