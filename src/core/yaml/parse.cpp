#include "core/yaml/parse.h"
