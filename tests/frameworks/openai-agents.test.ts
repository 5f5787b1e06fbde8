import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";

describeDurableRefunds("openai-agents", useFrameworkEnvironment());
