// One wording for validation messages, whatever has been loaded: @owf/mdoc (loaded with the first
// mdoc request) installs zod-validation-error's messages for the whole process when it loads, so the
// same map is installed here at start-up, and a 400 reads the same before and after that.
import { z } from 'zod';
import { createErrorMap } from 'zod-validation-error';

z.config({ customError: createErrorMap() });
