import { runOfficialSuiteOn } from "./langgraph-saver-suite";

runOfficialSuiteOn("postgres");
